/*
 * test_hostile_files.c - the second hostile-input review's file findings
 * (../shared/findings-2026-11-24.md), each by value:
 *   N1  outputs through links: /dev/stdout >> log appends (the CLI end to end),
 *       /proc/self/fd/N writes the open file in place, a link to a deleted file,
 *       a dangling link and a loop are refused and stay links, an ordinary link
 *       to a regular file is followed and stays a link;
 *   N13 an output that is a FIFO when checked and a regular file when opened is
 *       refused, never written over (swapped at clops's open, through io_open);
 *   N12 a FIFO whose reader leaves gives EPIPE, never SIGPIPE (the writer and
 *       clops_cache_export_pack, in a child with SIGPIPE's default action), and a
 *       SIGPIPE that is not the write's is left to the caller;
 *   the writer: a /proc/P/fd/N whose P is this process's pid only in its own pid
 *       namespace is opened by name, not taken for this process's descriptor N;
 *       a replacement drops setuid, setgid and sticky bits; the directory synced
 *       after the rename, swapped for a FIFO, does not block the writer;
 *   (N2, whose cache directory: test_cache_owner.c)
 *   N3  links planted in the cache directory (an entry, the tuning database, its
 *       lock, an entry an import installs) are replaced or removed, never followed;
 *   N14 prune removes stale temporaries under the size bound;
 *   N18 the lock of a tuning_db sits beside it, and a tuning_db shared by two
 *       devices keeps both devices' results.
 * Shared fixtures: cache_fixture.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "store/file.h"
#include "store/tune_db.h"

/* ---- helpers --------------------------------------------------------------------------------- */

static void root_file(const char *name, char *out, size_t size)
{
    ck_assert(snprintf(out, size, "%s/%s", g_root, name) < (int)size);
}

static void expect_content(const char *path, const char *want, const char *label)
{
    size_t n;
    unsigned char *got = read_all(path, &n);
    ck_assert_msg(n == strlen(want) && memcmp(got, want, n) == 0, "%s: %s holds %zu bytes \"%.*s\", want \"%s\"", label,
                  path, n, (int)(n > 60 ? 60 : n), (const char *)got, want);
    free(got);
}

static bool is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static bool is_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* clops_file_write_parts of `text` to `path` as the CLI writes its outputs. */
static int write_output(const char *path, const char *text, clops_file_writer *w)
{
    const void *const parts[1] = {text};
    const size_t sizes[1] = {strlen(text)};
    return clops_file_write_parts(path, 0666, CLOPS_FILE_IN_PLACE, parts, sizes, 1, w);
}

static void expect_refused(const char *path, int refusal, const char *words, const char *label)
{
    clops_file_writer w;
    ck_assert_msg(write_output(path, "new", &w) != 0, "%s: %s was written", label, path);
    char why[CLOPS_FILE_PATH_MAX + 128];
    clops_file_describe(&w, why, sizeof why);
    ck_assert_msg(w.refusal == refusal && strstr(why, words), "%s: refusal %d \"%s\", want %d with \"%s\"", label,
                  w.refusal, why, refusal, words);
}

/* Runs `fn` in a child (SIGPIPE and SIGALRM at their default actions, an alarm as a watchdog):
 * the test fails if the child dies of a signal or exits non-zero. */
static void in_child(void (*fn)(void), const char *label)
{
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        signal(SIGALRM, SIG_DFL); /* not Check's handler, which kills the whole process group */
        alarm(60);
        fn();
        _exit(0);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(!WIFSIGNALED(status), "%s: the child was killed by signal %d (%s)", label,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0, WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child failed (status 0x%x)", label, status);
}

/* ---- N1: outputs reached through links ---------------------------------------------------------- */

/* The finding's reproduction: `clops run ... /dev/stdout >> log.txt` appends. */
START_TEST(test_dev_stdout_appends)
{
    const char *cli = getenv("CLOPS_CLI"), *data = getenv("CLOPS_TEST_DATA");
    ck_assert_msg(cli && data, "CLOPS_CLI and CLOPS_TEST_DATA are set by ctest");
    char log[PATH_MAX + 32], cmd[3 * PATH_MAX];
    root_file("log.txt", log, sizeof log);
    write_all(log, "precious log line\n", 18);
    struct stat before, after;
    ck_assert(stat(log, &before) == 0);
    snprintf(cmd, sizeof cmd,
             "'%s' run depth-to-space '%s/dml_input_u32.npy' /dev/stdout --block-size 2 --device host >> '%s'", cli,
             data, log);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    ck_assert(stat(log, &after) == 0);
    size_t n;
    unsigned char *got = read_all(log, &n);
    ck_assert_msg(n > 18 + 128 && memcmp(got, "precious log line\n\x93NUMPY", 24) == 0,
                  "log.txt after /dev/stdout >> log.txt: %zu bytes, starting \"%.18s\"", n, (const char *)got);
    free(got);
    ck_assert_msg(after.st_ino == before.st_ino, "log.txt was replaced (a new inode), not appended to");
}
END_TEST

/* /proc/self/fd/N of an O_APPEND descriptor is written in place, through that
 * descriptor; /dev/fd/N likewise at the descriptor's own offset. */
START_TEST(test_proc_fd_in_place)
{
    char log[PATH_MAX + 32], path[64];
    root_file("log", log, sizeof log);
    write_all(log, "old|", 4);
    const int fd = open(log, O_WRONLY | O_APPEND);
    ck_assert(fd >= 0);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    clops_file_writer w;
    ck_assert_msg(write_output(path, "new|", &w) == 0, "%s: step %s, %s", path, w.step, strerror(w.error));
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    ck_assert_msg(write_output(path, "more", &w) == 0, "%s: step %s, %s", path, w.step, strerror(w.error));
    close(fd);
    expect_content(log, "old|new|more", "written through /proc/self/fd/N and /dev/fd/N");
    /* a descriptor open for reading only is refused, not replaced */
    const int rd = open(log, O_RDONLY);
    ck_assert(rd >= 0);
    snprintf(path, sizeof path, "/proc/self/fd/%d", rd);
    expect_refused(path, CLOPS_FILE_REFUSED_READ_ONLY, "reading only", "a read-only descriptor");
    close(rd);
    expect_content(log, "old|new|more", "after the read-only descriptor");
}
END_TEST

/* A link through /proc to a file that was deleted (stdout on a rotated log): as
 * root the old writer replaced /dev/stdout itself. Here the link is the test's
 * own, so today's main replaced it with a regular file. */
START_TEST(test_deleted_target_refused)
{
    char victim[PATH_MAX + 32], link_path[PATH_MAX + 32], target[64];
    root_file("victim.out", victim, sizeof victim);
    root_file("out-link", link_path, sizeof link_path);
    const int fd = open(victim, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ck_assert(fd >= 0 && write(fd, "kept", 4) == 4);
    ck_assert(unlink(victim) == 0);
    snprintf(target, sizeof target, "/proc/self/fd/%d", fd);
    ck_assert(symlink(target, link_path) == 0);
    expect_refused(link_path, CLOPS_FILE_REFUSED_DELETED, "deleted", "a link to a deleted file");
    expect_refused(target, CLOPS_FILE_REFUSED_DELETED, "deleted", "/proc/self/fd/N of a deleted file");
    ck_assert_msg(is_link(link_path), "the link was replaced");
    char buf[8] = "";
    ck_assert(pread(fd, buf, sizeof buf, 0) == 4 && memcmp(buf, "kept", 4) == 0);
    close(fd);
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}
END_TEST

START_TEST(test_unresolvable_links_refused)
{
    char dang[PATH_MAX + 32], loop1[PATH_MAX + 32], loop2[PATH_MAX + 32], missing[PATH_MAX + 32];
    root_file("dang.npy", dang, sizeof dang);
    root_file("loop1", loop1, sizeof loop1);
    root_file("loop2", loop2, sizeof loop2);
    root_file("nonexist", missing, sizeof missing);
    ck_assert(symlink("nonexist", dang) == 0 && symlink("loop2", loop1) == 0 && symlink("loop1", loop2) == 0);
    expect_refused(dang, CLOPS_FILE_REFUSED_UNRESOLVED, strerror(ENOENT), "a dangling link");
    expect_refused(loop1, CLOPS_FILE_REFUSED_UNRESOLVED, strerror(ELOOP), "a link loop");
    ck_assert_msg(is_link(dang) && is_link(loop1) && is_link(loop2), "a link was replaced");
    ck_assert_msg(!exists(missing), "the dangling link's target was created");
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}
END_TEST

/* An ordinary link to a regular file: the file is replaced (mode kept), the link stays. */
START_TEST(test_link_to_regular_followed)
{
    char real[PATH_MAX + 32], link_path[PATH_MAX + 32];
    root_file("real.npy", real, sizeof real);
    root_file("good.npy", link_path, sizeof link_path);
    write_all(real, "old", 3);
    ck_assert(chmod(real, 0640) == 0 && symlink("real.npy", link_path) == 0);
    struct stat before, after;
    ck_assert(stat(real, &before) == 0);
    clops_file_writer w;
    ck_assert_msg(write_output(link_path, "new", &w) == 0, "step %s: %s", w.step, strerror(w.error));
    ck_assert(stat(real, &after) == 0);
    ck_assert_msg(is_link(link_path), "the link was replaced");
    expect_content(real, "new", "the link's file");
    ck_assert_msg(after.st_ino != before.st_ino && (after.st_mode & 07777) == 0640,
                  "the file was not replaced atomically with its mode (inode %s, mode %o)",
                  after.st_ino != before.st_ino ? "new" : "the same", (unsigned)(after.st_mode & 07777));
}
END_TEST

/* A /proc/<pid>/fd/N path whose pid number is this process's in its own pid
 * namespace but another process's in /proc's: clops must not take descriptor N
 * of its own (another file) for it. Root only: a grandchild is made pid P (the
 * test's own pid outside) in a new pid namespace, with its N open to another
 * file; it writes "/proc/P/fd/N", which is the test's file. 77: not possible here. */
static int other_namespace_writer(pid_t p, int n, const char *mine)
{
    if (unshare(CLONE_NEWPID) != 0) return 77;
    const pid_t init = fork();
    if (init != 0) {
        int status;
        return init > 0 && waitpid(init, &status, 0) == init && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w"); /* the next pid in this namespace: P */
    if (!f || fprintf(f, "%d", (int)p - 1) < 0 || fclose(f) != 0) _exit(77);
    const pid_t g = fork();
    if (g == 0) {
        if (getpid() != p) _exit(77);
        const int fd = open(mine, O_WRONLY);
        CHILD_CHECK(fd >= 0 && dup2(fd, n) == n, "open %s at %d", mine, n);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)p, n);
        clops_file_writer w;
        CHILD_CHECK(write_output(path, "new", &w) == 0, "write %s: step %s: %s", path, w.step, strerror(w.error));
        _exit(0);
    }
    int status;
    _exit(g > 0 && waitpid(g, &status, 0) == g && WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

START_TEST(test_proc_fd_of_other_namespace)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_proc_fd_of_other_namespace: skipped, a pid namespace needs root\n");
        return;
    }
    char theirs[PATH_MAX + 32], mine[PATH_MAX + 32];
    root_file("theirs.txt", theirs, sizeof theirs);
    root_file("mine.txt", mine, sizeof mine);
    write_all(theirs, "theirs:", 7);
    write_all(mine, "mine", 4);
    const int fd = open(theirs, O_WRONLY | O_APPEND);
    ck_assert(fd >= 0);
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) _exit(other_namespace_writer(getppid(), fd, mine));
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    close(fd);
    if (WEXITSTATUS(status) == 77) {
        fprintf(stderr, "test_proc_fd_of_other_namespace: skipped, no pid namespace or ns_last_pid here\n");
        return;
    }
    ck_assert_msg(WEXITSTATUS(status) == 0, "the writer in the other namespace failed");
    expect_content(mine, "mine", "the other namespace's own descriptor");
    expect_content(theirs, "theirs:new", "the file /proc/P/fd/N names");
}
END_TEST

/* The directory of a file just renamed into place is synced (best effort) by
 * opening it: one swapped for a FIFO right after the rename must not block that
 * open (it waited for a writer forever). */
static char g_sub[PATH_MAX + 32], g_sub_moved[PATH_MAX + 32];
static int rename_then_swap_dir(const char *from, const char *to)
{
    const int rc = clops_cl_real.io_rename(from, to);
    if (rc == 0 && rename(g_sub, g_sub_moved) == 0) (void)mkfifo(g_sub, 0600);
    return rc;
}

static void dir_swapped_child(void)
{
    alarm(20); /* the watchdog for a blocked open */
    char path[2 * PATH_MAX], moved[2 * PATH_MAX];
    root_file("sub", g_sub, sizeof g_sub);
    root_file("sub.moved", g_sub_moved, sizeof g_sub_moved);
    snprintf(path, sizeof path, "%s/out.txt", g_sub);
    snprintf(moved, sizeof moved, "%s/out.txt", g_sub_moved);
    CHILD_CHECK(mkdir(g_sub, 0700) == 0, "mkdir");
    clops_cl.io_rename = rename_then_swap_dir;
    clops_file_writer w;
    CHILD_CHECK(write_output(path, "new", &w) == 0, "write: step %s: %s", w.step, strerror(w.error));
    char got[8] = "";
    const int fd = open(moved, O_RDONLY);
    CHILD_CHECK(fd >= 0 && read(fd, got, sizeof got) == 3 && memcmp(got, "new", 3) == 0, "the file was not written");
    close(fd);
}

START_TEST(test_dir_swapped_for_fifo_after_rename)
{
    in_child(dir_swapped_child, "a directory swapped for a FIFO after the rename");
}
END_TEST

/* ---- N13: a FIFO that becomes a regular file between the check and the open ----------------------- */

static char g_out[PATH_MAX + 32], g_reg_tmp[PATH_MAX + 32], g_victim[PATH_MAX + 32];

/* The swap at the one moment it matters, through clops's io_open seam: just
 * before clops opens the FIFO it checked, a hard link of the victim is put in
 * its place. */
static int swap_then_open(const char *path, int flags)
{
    if (strcmp(path, g_out) == 0 && link(g_victim, g_reg_tmp) == 0) (void)rename(g_reg_tmp, g_out);
    return clops_cl_real.io_open(path, flags);
}

START_TEST(test_fifo_swapped_for_regular)
{
    root_file("out", g_out, sizeof g_out);
    root_file("r.tmp", g_reg_tmp, sizeof g_reg_tmp);
    root_file("victim", g_victim, sizeof g_victim);
    write_all(g_victim, "victim's bytes", 14);
    ck_assert(mkfifo(g_out, 0600) == 0);
    clops_cl.io_open = swap_then_open;
    clops_file_writer w;
    const int rc = write_output(g_out, "TORN", &w);
    clops_cl.io_open = clops_cl_real.io_open;
    ck_assert_msg(is_regular(g_out), "the FIFO was not swapped for the victim");
    ck_assert_msg(rc != 0 && w.refusal == CLOPS_FILE_REFUSED_CHANGED, "rc %d, refusal %d: want the swap refused", rc,
                  w.refusal);
    expect_content(g_victim, "victim's bytes", "the victim put in the FIFO's place");
    ck_assert_int_eq(temps_in(g_root, NULL, 0), 0);
}
END_TEST

/* ---- N12: SIGPIPE ---------------------------------------------------------------------------------- */

/* The reader of a FIFO: waits for the first bytes, reads 100, then leaves. */
static void *read_a_little_and_leave(void *arg)
{
    const int fd = (int)(intptr_t)arg;
    char buf[100];
    const int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    (void)!read(fd, buf, sizeof buf);
    close(fd);
    return NULL;
}

static void sigpipe_writer_child(void)
{
    char fifo[PATH_MAX + 32];
    root_file("w.fifo", fifo, sizeof fifo);
    CHILD_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    const int reader = open(fifo, O_RDONLY | O_NONBLOCK);
    CHILD_CHECK(reader >= 0, "open the reader");
    clops_file_writer w;
    CHILD_CHECK(clops_file_begin(&w, fifo, 0666, CLOPS_FILE_IN_PLACE) == 0, "begin");
    close(reader); /* the reader leaves */
    const int rc = clops_file_write(&w, "x", 1);
    CHILD_CHECK(rc != 0 && w.step && strcmp(w.step, "write") == 0 && w.error == EPIPE,
                "write to a FIFO whose reader left: rc %d, step %s, %s", rc, w.step ? w.step : "-", strerror(w.error));
    clops_file_abort(&w);
    /* a reader that leaves in the middle of a write bigger than the pipe: Linux
     * raises SIGPIPE although that write returns a partial count */
    const int reader2 = open(fifo, O_RDONLY | O_NONBLOCK);
    CHILD_CHECK(reader2 >= 0, "open the second reader");
    CHILD_CHECK(clops_file_begin(&w, fifo, 0666, CLOPS_FILE_IN_PLACE) == 0, "begin again");
    pthread_t t;
    CHILD_CHECK(pthread_create(&t, NULL, read_a_little_and_leave, (void *)(intptr_t)reader2) == 0, "thread");
    static char big[1 << 18];
    const int rc2 = clops_file_write(&w, big, sizeof big);
    pthread_join(t, NULL);
    CHILD_CHECK(rc2 != 0 && w.error == EPIPE, "a write the reader left in the middle of: rc %d, %s", rc2,
                strerror(w.error));
    clops_file_abort(&w);
    sigset_t pending, mask;
    CHILD_CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE), "a SIGPIPE is left pending");
    CHILD_CHECK(pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0 && !sigismember(&mask, SIGPIPE),
                "the signal mask was not restored");
}

/* io_write seam: the pack's reader leaves just before the first write. */
static int g_reader = -1;
static ssize_t reader_leaves_then_write(int fd, const void *buf, size_t n)
{
    if (g_reader >= 0) close(g_reader);
    g_reader = -1;
    return clops_cl_real.io_write(fd, buf, n);
}

static void sigpipe_export_child(void)
{
    char fifo[PATH_MAX + 32];
    root_file("ex.fifo", fifo, sizeof fifo);
    CHILD_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    g_reader = open(fifo, O_RDONLY | O_NONBLOCK);
    CHILD_CHECK(g_reader >= 0, "open the reader");
    clops_cl.io_write = reader_leaves_then_write;
    size_t n = 0;
    const clops_status st = clops_cache_export_pack(fifo, &n);
    CHILD_CHECK(st == CLOPS_ERROR_CACHE_IO && strstr(clops_last_error_message(), strerror(EPIPE)),
                "export to a FIFO whose reader left: %s (%s)", clops_status_name(st), clops_last_error_message());
}

START_TEST(test_sigpipe_is_an_error)
{
    in_child(sigpipe_writer_child, "the file writer");
    in_child(sigpipe_export_child, "clops_cache_export_pack");
}
END_TEST

/* A SIGPIPE that is not the write's - sent during a write that went through, or
 * pending before one that failed - is left to the caller, never consumed. */
static volatile sig_atomic_t g_pipes;
static void count_pipe(int sig)
{
    (void)sig;
    g_pipes++;
}

static ssize_t signalled_write(int fd, const void *buf, size_t n)
{
    kill(getpid(), SIGPIPE); /* another process's signal, arriving while clops blocks it */
    return clops_cl_real.io_write(fd, buf, n);
}

static void sigpipe_left_child(void)
{
    CHILD_CHECK(signal(SIGPIPE, count_pipe) != SIG_ERR, "signal");
    clops_cl.io_write = signalled_write;
    clops_file_writer w;
    CHILD_CHECK(write_output("/dev/null", "bytes", &w) == 0, "write to /dev/null: %s", strerror(w.error));
    clops_cl.io_write = clops_cl_real.io_write;
    CHILD_CHECK(g_pipes == 1, "the caller's SIGPIPE was delivered %d times during a write that went through, want 1",
                (int)g_pipes);
    char fifo[PATH_MAX + 32];
    root_file("pending.fifo", fifo, sizeof fifo);
    CHILD_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    const int reader = open(fifo, O_RDONLY | O_NONBLOCK);
    CHILD_CHECK(reader >= 0 && clops_file_begin(&w, fifo, 0666, CLOPS_FILE_IN_PLACE) == 0, "begin");
    close(reader);
    sigset_t pipe_only, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    CHILD_CHECK(sigprocmask(SIG_BLOCK, &pipe_only, NULL) == 0 && raise(SIGPIPE) == 0, "block and raise");
    CHILD_CHECK(clops_file_write(&w, "x", 1) != 0 && w.error == EPIPE, "write: %s", strerror(w.error));
    clops_file_abort(&w);
    CHILD_CHECK(sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1,
                "the SIGPIPE pending before the write was consumed");
}

START_TEST(test_sigpipe_left_to_caller)
{
    in_child(sigpipe_left_child, "a SIGPIPE that is not the write's");
}
END_TEST

/* A replacement does not keep the old file's setuid, setgid or sticky bit. */
START_TEST(test_replacement_drops_special_bits)
{
    static const mode_t modes[] = {04755, 02750, 01644};
    char path[PATH_MAX + 32];
    root_file("special", path, sizeof path);
    for (int i = 0; i < 3; i++) {
        write_all(path, "old", 3);
        ck_assert(chmod(path, modes[i]) == 0);
        clops_file_writer w;
        ck_assert_msg(write_output(path, "new", &w) == 0, "step %s: %s", w.step, strerror(w.error));
        struct stat st;
        ck_assert(stat(path, &st) == 0);
        ck_assert_msg((st.st_mode & 07777) == (modes[i] & 0777), "mode %04o replaced with mode %04o, want %04o",
                      (unsigned)modes[i], (unsigned)(st.st_mode & 07777), (unsigned)(modes[i] & 0777));
        expect_content(path, "new", "the replacement");
    }
}
END_TEST

/* ---- N3: links planted in the cache directory ---------------------------------------------------- */

START_TEST(test_entry_link_not_followed)
{
    const built_entry a = build_entry(&CASE_A, "A");
    char victim[PATH_MAX + 32], outside[PATH_MAX + 32];
    root_file("victim.txt", victim, sizeof victim);
    root_file("outside.bin", outside, sizeof outside);
    write_all(victim, "alice's important data", 22);
    ck_assert(rename(a.path, outside) == 0); /* a valid entry, outside the cache */
    /* a link to a valid entry outside is not loaded through (and its mtime stays) */
    age_file(outside, 7200);
    const struct timespec old = mtime_of(outside);
    ck_assert(symlink(outside, a.path) == 0);
    check_fresh(&CASE_A, "compiled", "an entry that is a link to a valid entry");
    ck_assert_msg(mtime_of(outside).tv_sec == old.tv_sec, "the link's target was touched");
    ck_assert_msg(is_regular(a.path), "the stored entry is not a regular file");
    /* a link to a victim is replaced by the store, the victim untouched */
    ck_assert(unlink(a.path) == 0 && symlink(victim, a.path) == 0);
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    const char key[] = "clops-test N3 entry";
    char path[PATH_MAX + 64];
    clops_cache_entry_path(&cfg, key, sizeof key - 1, path, sizeof path);
    ck_assert(symlink(victim, path) == 0);
    clops_cache_store(&cfg, key, sizeof key - 1, (const unsigned char *)"payload", 7);
    expect_content(victim, "alice's important data", "the victim of a link in place of an entry");
    ck_assert_msg(is_regular(path), "the link in place of the entry is still there");
    check_fresh(&CASE_A, "compiled", "a link to a victim in place of A's entry");
    expect_content(victim, "alice's important data", "the victim after a build");
    ck_assert_msg(is_regular(a.path), "A's entry is not a regular file");
    /* links named like entries or temporaries are removed by clear, their targets kept */
    char tmp_link[PATH_MAX + 64];
    entry_file(".tmp-abcdef", tmp_link, sizeof tmp_link);
    ck_assert(symlink(victim, tmp_link) == 0);
    ck_assert(unlink(a.path) == 0 && symlink(victim, a.path) == 0);
    char lock[PATH_MAX + 64];
    entry_file("lock-tune-0123456789abcdef", lock, sizeof lock);
    size_t n = 0;
    ck_assert(symlink(victim, lock) == 0);
    ck_assert_int_eq(clops_cache_clear_all(&n), CLOPS_SUCCESS);
    ck_assert_msg(!is_link(tmp_link) && !is_link(a.path) && !is_link(lock), "clear left a link");
    expect_content(victim, "alice's important data", "the victim after clear");
}
END_TEST

START_TEST(test_tuning_links_not_followed)
{
    clops_context *ctx = new_ctx();
    char db[PATH_MAX + 64], lock[PATH_MAX + 64], victim[PATH_MAX + 32], created[PATH_MAX + 32];
    tune_file_path(ctx, db, sizeof db);
    snprintf(lock, sizeof lock, "%s/lock-tune-%016llx", g_dir,
             (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, ctx->identity, strlen(ctx->identity)));
    root_file("notes.txt", victim, sizeof victim);
    root_file("created-by-lock", created, sizeof created);
    write_all(victim, "alice's important data", 22);
    ck_assert(symlink(victim, db) == 0 && symlink(created, lock) == 0);
    clops_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.key, sizeof e.key, "depth_to_space -DTEST_N3=1");
    e.value.chunk = 3;
    e.value.local[0] = e.value.local[1] = e.value.local[2] = 1;
    e.gbps = 2.0, e.default_gbps = 1.0;
    const clops_status st = clops_tuning_record(ctx, &e, true);
    ck_assert_msg(st == CLOPS_SUCCESS, "record: %s (%s)", clops_status_name(st), clops_last_error_message());
    expect_content(victim, "alice's important data", "the victim of the database's link");
    ck_assert_msg(!exists(created), "the lock's link created its target");
    ck_assert_msg(is_regular(db) && is_regular(lock), "the database or the lock is not a regular file");
    struct clops_tuning_table *t = clops_tuning_table_load(ctx);
    ck_assert_msg(t && t->count == 1 && t->entries[0].value.chunk == 3, "the recorded result was not read back");
    clops_tuning_table_free(t);
}
END_TEST

START_TEST(test_import_link_not_followed)
{
    char names[2][32], pack[PATH_MAX + 32], victim[PATH_MAX + 32], path[PATH_MAX + 64];
    make_pack(names);
    pack_path(pack, sizeof pack);
    root_file("victim.txt", victim, sizeof victim);
    write_all(victim, "alice's important data", 22);
    entry_file(names[0], path, sizeof path);
    ck_assert(symlink(victim, path) == 0);
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(pack, &r);
    ck_assert_msg(st == CLOPS_SUCCESS && r.imported == 2,
                  "import: %s (%s), imported %zu of %zu: %zu duplicates, %zu other device, %zu rejected (%s), "
                  "%zu over the limit", clops_status_name(st), clops_last_error_message(), r.imported, r.entries,
                  r.duplicates, r.other_device, r.rejected, r.reason, r.over_limit);
    expect_content(victim, "alice's important data", "the victim of a link in place of an imported entry");
    ck_assert_msg(is_regular(path), "the imported entry is not a regular file");
    check_fresh(&CASE_A, "disk cache", "the imported A");
}
END_TEST

/* ---- N14: prune under the bound ------------------------------------------------------------------ */

START_TEST(test_prune_stale_under_bound)
{
    build_entry(&CASE_A, "A");
    char stale[PATH_MAX + 64], young[PATH_MAX + 64];
    entry_file(".tmp-clyxcq", stale, sizeof stale);
    entry_file(".tmp-young1", young, sizeof young);
    write_all(stale, "left by a killed writer", 23);
    write_all(young, "a write in progress", 19);
    age_file(stale, 2 * 3600);
    setenv("CLOPS_CACHE_MAX_SIZE", "100M", 1);
    size_t n = 99;
    ck_assert_int_eq(clops_cache_prune(&n), CLOPS_SUCCESS);
    ck_assert_msg(!exists(stale), "prune under the bound left a two-hour-old temporary file");
    ck_assert_msg(exists(young) && n == 1, "prune removed %zu files (want the stale one only)", n);
    const dir_scan s = scan_dir();
    ck_assert_int_eq(s.entries, 1);
}
END_TEST

/* ---- N18: a tuning_db of the user's ---------------------------------------------------------------- */

static clops_tuning_entry tune_entry(int i)
{
    clops_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.key, sizeof e.key, "depth_to_space -DTEST_N18=%d", i);
    e.value.chunk = (unsigned)i;
    e.value.local[0] = e.value.local[1] = e.value.local[2] = 1;
    e.gbps = 2.0, e.default_gbps = 1.0;
    return e;
}

static void expect_chunks(const clops_context *ctx, const char *want, const char *label)
{
    struct clops_tuning_table *t = clops_tuning_table_load(ctx);
    ck_assert(t);
    char got[64] = "";
    for (int i = 1; i <= 9; i++)
        for (size_t j = 0; j < t->count; j++)
            if (t->entries[j].value.chunk == (unsigned)i) snprintf(got + strlen(got), sizeof got - strlen(got), "%d", i);
    clops_tuning_table_free(t);
    ck_assert_msg(strcmp(got, want) == 0, "%s: results %s, want %s", label, got, want);
}

START_TEST(test_tuning_db_lock_and_devices)
{
    char db[PATH_MAX + 32], lock[PATH_MAX + 40], other_cache[PATH_MAX + 32];
    root_file("tune.txt", db, sizeof db);
    snprintf(lock, sizeof lock, "%s.lock", db);
    root_file("other-cache", other_cache, sizeof other_cache);
    clops_context *a = ctx_with_db(db, g_dir), *b = ctx_with_db(db, other_cache);
    b->info.device_name[0] ^= 1; /* another device's name */
    clops_tuning_entry e1 = tune_entry(1), e2 = tune_entry(2), e3 = tune_entry(3);
    ck_assert_int_eq(clops_tuning_record(a, &e1, true), CLOPS_SUCCESS);
    /* one device: the version-1 format, and the lock beside the database */
    FILE *f = fopen(db, "r");
    char line[64] = "";
    ck_assert(f && fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "clops-tune 1\n");
    ck_assert_msg(exists(lock), "no lock beside the tuning_db");
    char cache_lock[PATH_MAX + 64];
    snprintf(cache_lock, sizeof cache_lock, "%s/lock-tune-%016llx", g_dir,
             (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, a->identity, strlen(a->identity)));
    ck_assert_msg(!exists(cache_lock), "the tuner's lock is in the cache directory, not beside the tuning_db");
    /* two devices on one database keep each other's results */
    ck_assert_int_eq(clops_tuning_record(b, &e2, true), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_tuning_record(a, &e3, true), CLOPS_SUCCESS);
    expect_chunks(a, "13", "the first device");
    expect_chunks(b, "2", "the second device");
    e1.value.chunk = 4;
    ck_assert_int_eq(clops_tuning_record(a, &e1, false), CLOPS_SUCCESS); /* removes a's e1 only */
    expect_chunks(a, "3", "the first device after a removal");
    expect_chunks(b, "2", "the second device after the first's removal");
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile_files");
    TCase *tc = cache_case(s, "hostile files");
    TC_TESTS(tc, test_dev_stdout_appends, test_proc_fd_in_place, test_deleted_target_refused,
             test_unresolvable_links_refused, test_link_to_regular_followed, test_proc_fd_of_other_namespace,
             test_fifo_swapped_for_regular, test_sigpipe_is_an_error, test_sigpipe_left_to_caller,
             test_replacement_drops_special_bits, test_dir_swapped_for_fifo_after_rename, test_entry_link_not_followed,
             test_tuning_links_not_followed, test_import_link_not_followed, test_prune_stale_under_bound,
             test_tuning_db_lock_and_devices);
    return s;
}

int main(void)
{
    return cache_suite_main(hostile_suite());
}
