/* test_fs.h - environment and file-system helpers for the suites that move the
 * program cache around (include after the feature macros that nftw needs). */
#ifndef CLOPS_TEST_FS_H
#define CLOPS_TEST_FS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Sets an environment variable, or unsets it when value is NULL or empty
 * (clops reads an empty variable as unset). */
static inline void tc_set_env(const char *name, const char *value)
{
    if (value && *value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static inline int tc_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* rm -rf for a test's temporary directory. */
static inline void tc_rm_rf(const char *path)
{
    nftw(path, tc_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Saves the environment variables `names`, then unsets all but the first
 * `keep` of them, so a suite starts from a known environment. */
static inline void tc_env_save(const char *const *names, size_t n, char **saved, int *was_set, size_t keep)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        was_set[i] = v != NULL;
        saved[i] = v ? strdup(v) : NULL;
        if (i >= keep)
            unsetenv(names[i]);
    }
}

/* Puts back what tc_env_save saved, exactly (an empty value stays set). */
static inline void tc_env_restore(const char *const *names, size_t n, char **saved, const int *was_set)
{
    for (size_t i = 0; i < n; i++) {
        if (was_set[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
        saved[i] = NULL;
    }
}

#endif
