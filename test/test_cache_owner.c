/*
 * test_cache_owner.c - N2 of the second hostile-input review
 * (../shared/findings-2026-11-24.md) and its follow-ups, by value: a cache
 * directory writable by group or others, or owned by another user (two uids when
 * run as root: the other one plants an entry), runs uncached and says why; a link
 * as the directory is resolved once (re-pointing it after the check changes
 * nothing); a directory root owns that no one else may write is another user's
 * read-only cache (as root, through a child that setresuid's). Shared fixtures:
 * cache_fixture.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "store/cache.h"

static void root_file(const char *name, char *out, size_t size)
{
    ck_assert(snprintf(out, size, "%s/%s", g_root, name) < (int)size);
}

/* ---- N2: whose cache directory ------------------------------------------------------------------- */

/* Files in `dir`. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "opendir(%s): %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.' || strncmp(e->d_name, ".tmp-", 5) == 0;
    closedir(d);
    return n;
}

static void expect_uncached(const char *dir, const char *words, const char *label)
{
    char status[8192];
    setenv("CLOPS_CACHE_DIR", dir, 1);
    clops_cache_status(status, sizeof status);
    ck_assert_msg(strstr(status, "running uncached") && strstr(status, words), "%s: cache status \"%s\", want \"%s\"",
                  label, status, words);
    const int before = count_files(dir);
    clops_context *ctx = new_ctx();
    ck_assert_msg(strstr(clops_context_cache_status(ctx), words), "%s: context's cache status \"%s\"", label,
                  clops_context_cache_status(ctx));
    check_case(ctx, &CASE_A, CLOPS_BACKEND_OPENCL, "compiled", label);
    drop_ctx(ctx);
    ck_assert_msg(count_files(dir) == before, "%s: a file was stored in the directory", label);
}

START_TEST(test_group_writable_dir)
{
    const built_entry a = build_entry(&CASE_A, "owner's entry");
    (void)a;
    ck_assert(chmod(g_dir, 0770) == 0);
    expect_uncached(g_dir, "writable by its group or others, mode 0770", "a group-writable cache");
    ck_assert(chmod(g_dir, 0703) == 0);
    expect_uncached(g_dir, "writable by its group or others, mode 0703", "an others-writable cache");
    ck_assert(chmod(g_dir, 0755) == 0);
    check_fresh(&CASE_A, "disk cache", "a 0755 cache");
    ck_assert(chmod(g_dir, 0700) == 0);
    check_fresh(&CASE_A, "disk cache", "a 0700 cache");
}
END_TEST

#define OTHER_UID 2002

/* As user OTHER_UID: a world-writable cache directory in a sticky shared one
 * (like /tmp), with `entry` planted under its name. */
static void plant_as_other_user(const char *dir, const built_entry *entry)
{
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        CHILD_CHECK(setresgid(OTHER_UID, OTHER_UID, OTHER_UID) == 0 && setresuid(OTHER_UID, OTHER_UID, OTHER_UID) == 0,
                    "setresuid: %s", strerror(errno));
        umask(0);
        CHILD_CHECK(mkdir(dir, 0777) == 0, "mkdir %s as uid %d: %s", dir, OTHER_UID, strerror(errno));
        char path[2 * PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, entry->name);
        const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        CHILD_CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
        _exit(0);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the bytes: a valid entry, copied by root into the file the other user owns */
    size_t n;
    unsigned char *bytes = read_all(entry->path, &n);
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, entry->name);
    write_all(path, bytes, n);
    free(bytes);
}

START_TEST(test_foreign_owned_dir)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_foreign_owned_dir: skipped, two users need root (running as uid %u)\n",
                (unsigned)geteuid());
        return;
    }
    const built_entry a = build_entry(&CASE_A, "the entry B plants");
    char shared[PATH_MAX + 32], dir[PATH_MAX + 64], words[96];
    root_file("ptmp", shared, sizeof shared);
    ck_assert(chmod(g_root, 0711) == 0 && mkdir(shared, 0700) == 0 && chmod(shared, 01777) == 0);
    snprintf(dir, sizeof dir, "%s/shared", shared);
    plant_as_other_user(dir, &a);
    struct stat st;
    ck_assert(stat(dir, &st) == 0 && st.st_uid == OTHER_UID);
    snprintf(words, sizeof words, "owned by uid %d, not by this user, uid 0", OTHER_UID);
    expect_uncached(dir, words, "a cache directory of another user");
    /* the same directory, once it is root's and 0700, is used */
    ck_assert(chown(dir, 0, 0) == 0 && chmod(dir, 0700) == 0);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    check_fresh(&CASE_A, "disk cache", "the directory made root's");
}
END_TEST

/* A cache directory given as a link is resolved once: re-pointing the link to
 * another directory after the owner check (the check passed on the victim's
 * own directory) changes nothing; entries go to the resolved directory. */
START_TEST(test_cache_dir_link_resolved_once)
{
    char mine[PATH_MAX + 32], theirs[PATH_MAX + 32], link_path[PATH_MAX + 32], want[PATH_MAX];
    root_file("mine", mine, sizeof mine);
    root_file("theirs", theirs, sizeof theirs);
    root_file("cache-link", link_path, sizeof link_path);
    ck_assert(mkdir(mine, 0700) == 0 && mkdir(theirs, 0700) == 0 && symlink(mine, link_path) == 0);
    ck_assert(realpath(mine, want) != NULL);
    setenv("CLOPS_CACHE_DIR", link_path, 1);
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    ck_assert_msg(cfg.mode == CLOPS_CACHE_READ_WRITE && strcmp(cfg.dir, want) == 0, "mode %d, dir %s, want %s",
                  (int)cfg.mode, cfg.dir, want);
    ck_assert(unlink(link_path) == 0 && symlink(theirs, link_path) == 0); /* re-pointed */
    clops_cache_store(&cfg, "key", 3, (const unsigned char *)"payload", 7);
    unsigned char *got = NULL;
    size_t n = 0;
    ck_assert(clops_cache_load(&cfg, "key", 3, &got, &n) && n == 7 && memcmp(got, "payload", 7) == 0);
    free(got);
    ck_assert_msg(count_files(mine) == 1 && count_files(theirs) == 0,
                  "the entry went through the re-pointed link (%d files in the checked directory, %d in the other)",
                  count_files(mine), count_files(theirs));
}
END_TEST

/* As OTHER_UID: the cache g_dir's mode and status, and whether "key" loads. */
static void read_as_other_user(mode_t dir_mode, clops_cache_mode want, const char *words, bool loads)
{
    ck_assert(chmod(g_dir, dir_mode) == 0);
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        CHILD_CHECK(setresgid(OTHER_UID, OTHER_UID, OTHER_UID) == 0 && setresuid(OTHER_UID, OTHER_UID, OTHER_UID) == 0,
                    "setresuid: %s", strerror(errno));
        clops_cache_config cfg;
        clops_cache_config_from_env(&cfg);
        CHILD_CHECK(cfg.mode == want && strstr(cfg.status, words), "mode %04o: mode %d, status \"%s\", want %d, \"%s\"",
                    (unsigned)dir_mode, (int)cfg.mode, cfg.status, (int)want, words);
        unsigned char *got = NULL;
        size_t n = 0;
        const bool hit = clops_cache_load(&cfg, "key", 3, &got, &n) && n == 7 && memcmp(got, "payload", 7) == 0;
        CHILD_CHECK(hit == loads, "mode %04o: the entry %s", (unsigned)dir_mode, hit ? "loaded" : "did not load");
        free(got);
        _exit(0);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "mode %04o: the other user's check failed",
                  (unsigned)dir_mode);
}

/* A system-wide cache: a directory root owns and no one else may write is used
 * read-only by other users (as ssh trusts root-owned parents); group-writable,
 * it is not used. */
START_TEST(test_root_owned_dir_read_only)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_root_owned_dir_read_only: skipped, another user needs root (running as uid %u)\n",
                (unsigned)geteuid());
        return;
    }
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    ck_assert_int_eq(cfg.mode, CLOPS_CACHE_READ_WRITE);
    clops_cache_store(&cfg, "key", 3, (const unsigned char *)"payload", 7);
    char entry[CLOPS_CACHE_PATH_MAX + 32];
    clops_cache_entry_path(&cfg, "key", 3, entry, sizeof entry);
    ck_assert(chmod(entry, 0644) == 0 && chmod(g_root, 0711) == 0);
    read_as_other_user(0755, CLOPS_CACHE_READ_ONLY, "(read-only: a system-wide cache, owned by root)", true);
    read_as_other_user(0775, CLOPS_CACHE_OFF, "writable by its group or others, mode 0775", false);
    read_as_other_user(0757, CLOPS_CACHE_OFF, "writable by its group or others, mode 0757", false);
    ck_assert(chmod(g_dir, 0700) == 0);
}
END_TEST

static Suite *owner_suite(void)
{
    Suite *s = suite_create("cache_owner");
    TCase *tc = cache_case(s, "cache owner");
    TC_TESTS(tc, test_group_writable_dir, test_foreign_owned_dir, test_cache_dir_link_resolved_once,
             test_root_owned_dir_read_only);
    return s;
}

int main(void)
{
    return cache_suite_main(owner_suite());
}
