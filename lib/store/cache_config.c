/* cache_config.c - where the program cache lives and how it may be used, from a
 * context's options (core/options.c: CLOPS_CACHE, CLOPS_CACHE_DIR and
 * CLOPS_CACHE_MAX_SIZE are read there); the default directory from
 * XDG_CACHE_HOME or HOME. A directory that is not the effective user's, or that
 * its group or others may write, is not used (N2): clops runs uncached and the
 * status says why; one root owns that no one else may write is used read-only.
 * The directory is resolved (realpath) once, and its resolved path is the one
 * every later access uses. */
#define _DEFAULT_SOURCE /* realpath, PATH_MAX, O_NOFOLLOW, O_DIRECTORY */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* mkdir -p for the cache directory (mode 0700 for what it creates). */
static int make_dirs(const char *path)
{
    char buf[CLOPS_CACHE_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return ENAMETOOLONG;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (clops_cl.io_mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
        *p = '/';
    }
    if (clops_cl.io_mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
    struct stat st; /* EEXIST for a file in the way means "not a directory" */
    if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode)) return ENOTDIR;
    return 0;
}

void clops_cache_config_init(clops_cache_config *cfg, const clops_context_options *o)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_bytes = o->cache_max_bytes;
    if (o->cache == CLOPS_CACHE_POLICY_OFF) {
        cfg->mode = CLOPS_CACHE_OFF;
        snprintf(cfg->status, sizeof cfg->status, "off (CLOPS_CACHE=off)");
        return;
    }
    cfg->mode = o->cache == CLOPS_CACHE_POLICY_READ_ONLY ? CLOPS_CACHE_READ_ONLY : CLOPS_CACHE_READ_WRITE;
    const char *dir = o->cache_dir, *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (dir && *dir)
        n = snprintf(cfg->dir, sizeof cfg->dir, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(cfg->dir, sizeof cfg->dir, "%s/clops", xdg);
    else if (home && *home)
        n = snprintf(cfg->dir, sizeof cfg->dir, "%s/.cache/clops", home);
    else
        n = -1;
    if (n < 0 || n >= (int)sizeof cfg->dir) {
        cfg->mode = CLOPS_CACHE_OFF;
        cfg->dir[0] = '\0';
        if (n < 0)
            snprintf(cfg->status, sizeof cfg->status, "off (no CLOPS_CACHE_DIR, XDG_CACHE_HOME or HOME)");
        else
            snprintf(cfg->status, sizeof cfg->status, "off (the cache directory's path has %d bytes, more than %d)", n,
                     CLOPS_CACHE_PATH_MAX - 1);
        return;
    }
    int err = cfg->mode == CLOPS_CACHE_READ_WRITE ? make_dirs(cfg->dir) : 0;
    /* The directory is resolved once, here: every later access uses the resolved
     * path, so a link given as the directory cannot be re-pointed after the check
     * below. Its last step is opened without following a link and the descriptor,
     * not the name, is checked; the resolved path's parents must not be writable
     * by others (docs/security.md). */
    char resolved[PATH_MAX];
    struct stat st = {0};
    int fd = -1;
    if (!err && !realpath(cfg->dir, resolved)) err = errno;
    if (!err && snprintf(cfg->dir, sizeof cfg->dir, "%s", resolved) >= (int)sizeof cfg->dir) err = ENAMETOOLONG;
    if (!err && (fd = open(cfg->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) err = errno;
    if (!err && fstat(fd, &st) != 0) err = errno;
    if (fd >= 0) close(fd);
    if (!err && !S_ISDIR(st.st_mode)) err = ENOTDIR;
    /* N2: an entry is a binary clops loads and runs, so, as ssh treats ~/.ssh,
     * the directory must be this user's and writable by no one else. One that
     * root owns and no one else may write (a system-wide cache, e.g. a read-only
     * /var/cache/clops filled from a pack) is used read-only, as ssh trusts
     * root-owned parents. */
    const unsigned euid = (unsigned)geteuid();
    const bool others_write = !err && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    const bool system_wide = !err && !others_write && st.st_uid == 0 && euid != 0;
    if (system_wide) cfg->mode = CLOPS_CACHE_READ_ONLY;
    if (!err && (others_write || (st.st_uid != euid && !system_wide))) {
        cfg->mode = CLOPS_CACHE_OFF;
        if (st.st_uid != euid && st.st_uid != 0) /* root's would do if no one else could write it */
            snprintf(cfg->status, sizeof cfg->status,
                     "unsafe, running uncached (%s is owned by uid %u, not by this user, uid %u: its entries "
                     "could be another user's binaries)", cfg->dir, (unsigned)st.st_uid, euid);
        else
            snprintf(cfg->status, sizeof cfg->status,
                     "unsafe, running uncached (%s is writable by its group or others, mode %04o: "
                     "chmod go-w it)", cfg->dir, (unsigned)(st.st_mode & 07777));
        return;
    }
    if (err || access(cfg->dir, cfg->mode == CLOPS_CACHE_READ_WRITE ? (R_OK | W_OK | X_OK) : (R_OK | X_OK)) != 0) {
        const int e = err ? err : errno;
        cfg->mode = CLOPS_CACHE_OFF;
        snprintf(cfg->status, sizeof cfg->status, "unavailable, running uncached (%s: %s)", cfg->dir, strerror(e));
        return;
    }
    if (system_wide) {
        snprintf(cfg->status, sizeof cfg->status, "%s (read-only: a system-wide cache, owned by root)", cfg->dir);
        return;
    }
    snprintf(cfg->status, sizeof cfg->status, "%s (%s)", cfg->dir,
             cfg->mode == CLOPS_CACHE_READ_ONLY ? "read-only" : "read-write");
}

clops_status clops_cache_config_from(clops_cache_config *cfg, const clops_context_options *opts)
{
    clops_context_options o;
    const clops_status st = clops_options_resolve(opts, &o);
    if (st == CLOPS_SUCCESS) {
        clops_cache_config_init(cfg, &o);
        return st;
    }
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = CLOPS_CACHE_OFF;
    snprintf(cfg->status, sizeof cfg->status, "off (%s)", clops_last_error_message());
    return st;
}

clops_status clops_cache_config_from_env(clops_cache_config *cfg)
{
    return clops_cache_config_from(cfg, NULL);
}

/* ---- public calls ------------------------------------------------------------------------- */

const char *clops_cache_status_with_options(const clops_context_options *opts, char *buf, size_t size)
{
    clops_cache_config cfg;
    clops_cache_config_from(&cfg, opts);
    if (buf && size) snprintf(buf, size, "%s", cfg.status);
    return buf;
}

const char *clops_cache_status(char *buf, size_t size)
{
    return clops_cache_status_with_options(NULL, buf, size);
}

clops_status clops_cache_usable(clops_cache_config *cfg, const clops_context_options *opts, bool writable)
{
    const clops_status st = clops_cache_config_from(cfg, opts);
    if (st != CLOPS_SUCCESS) return st;
    if (cfg->mode == CLOPS_CACHE_OFF || (writable && cfg->mode != CLOPS_CACHE_READ_WRITE))
        return clops_fail(CLOPS_ERROR_CACHE_UNAVAILABLE, "program cache %s", cfg->status);
    return CLOPS_SUCCESS;
}
