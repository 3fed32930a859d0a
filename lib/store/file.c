/* file.c - the one atomic file writer and the one file reader (file.h). */
#define _DEFAULT_SOURCE /* realpath, PATH_MAX, O_NOFOLLOW */
#define _POSIX_C_SOURCE 200809L
#include "store/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef CLOPS_BUILDING_LIBRARY
#include "cl_api.h" /* the file-system seam tests can make fail */
#define IO_CREATE clops_cl.io_create
#define IO_WRITE clops_cl.io_write
#define IO_FSYNC clops_cl.io_fsync
#define IO_RENAME clops_cl.io_rename
#define IO_OPEN clops_cl.io_open
#else
static int create_exclusive(const char *path, mode_t mode)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
}
#define IO_CREATE create_exclusive
#define IO_WRITE write
#define IO_FSYNC fsync
#define IO_RENAME rename
#define IO_OPEN open
#endif

static int fail(clops_file_writer *w, const char *step)
{
    if (!w->step) {
        w->step = step;
        w->error = errno;
    }
    return -1;
}

/* Six name characters no other process or thread is likely to pick at once;
 * O_EXCL settles the rest. */
static void temp_suffix(char out[7], unsigned attempt)
{
    static atomic_uint counter;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = (uint64_t)getpid() << 32 ^ (uint64_t)atomic_fetch_add(&counter, 1) << 16 ^ attempt ^
                 (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec << 40;
    x += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int i = 0; i < 6; i++, x /= 36) out[i] = digits[x % 36];
    out[6] = '\0';
}

static int refuse(clops_file_writer *w, int why, int err)
{
    w->refusal = why;
    errno = err;
    return fail(w, "target");
}

/* The kinds of file written in place (with CLOPS_FILE_IN_PLACE). */
static bool in_place_kind(mode_t m)
{
    return S_ISCHR(m) || S_ISFIFO(m);
}

/* Opens `path`, a character device or FIFO (`st`), for writing in place; the
 * opened descriptor must still be that kind of file (N13: a regular file put
 * there between the stat and the open is refused, never written over). */
static int begin_in_place(clops_file_writer *w, const struct stat *st, int open_flags)
{
    /* O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of blocking. */
    w->fd = IO_OPEN(w->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | open_flags);
    if (w->fd < 0) return fail(w, "target");
    w->in_place = true;
    struct stat now;
    const int fl = fcntl(w->fd, F_GETFL);
    if (fstat(w->fd, &now) != 0 || fl < 0 || fcntl(w->fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        fail(w, "target");
    } else if ((now.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
        refuse(w, CLOPS_FILE_REFUSED_CHANGED, EAGAIN);
    }
    if (!w->step) return 0;
    close(w->fd); /* nothing was written: an in-place abort leaves the file as it is */
    w->fd = -1;
    return -1;
}

/* Writes in place into this process's open descriptor `fd`, reached through
 * /dev/stdout, /dev/fd/N or /proc/self/fd/N: the same open file (its offset, its
 * O_APPEND), so `clops run ... /dev/stdout >> log` appends to log. The caller
 * checked that `fd` is the file the path leads to (same_file). */
/* Whether descriptor `fd` is the file `st` describes (the number read from a
 * /proc path can name another file: a process of another pid namespace with our
 * pid number, a descriptor another thread dup2'ed over since). */
static bool same_file(int fd, const struct stat *st)
{
    struct stat fs;
    return fstat(fd, &fs) == 0 && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino;
}

static int begin_on_descriptor(clops_file_writer *w, int fd)
{
    struct stat st;
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fstat(fd, &st) != 0) return fail(w, "target");
    if (S_ISREG(st.st_mode) && st.st_nlink == 0) return refuse(w, CLOPS_FILE_REFUSED_DELETED, ENOENT);
    if (!S_ISREG(st.st_mode) && !in_place_kind(st.st_mode)) return refuse(w, CLOPS_FILE_REFUSED_KIND, EINVAL);
    if ((fl & O_ACCMODE) == O_RDONLY) return refuse(w, CLOPS_FILE_REFUSED_READ_ONLY, EBADF);
    w->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (w->fd < 0) return fail(w, "target");
    w->in_place = true;
    return 0;
}

/* Follows the symbolic links from `path` until one that lives in /proc (a
 * process's open file: /dev/stdout -> /proc/self/fd/1, /dev/fd/N, /proc/PID/fd/N).
 * True if there is one; then `*own_fd` is its descriptor number when the file is
 * open in this process (/proc/<our pid>/fd/N, also through a task), else -1. */
static bool through_proc(const char *path, int *own_fd)
{
    char cur[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], next[PATH_MAX];
    *own_fd = -1;
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) return false;
    for (int hop = 0; hop < 40; hop++) {
        struct stat l;
        if (lstat(cur, &l) != 0 || !S_ISLNK(l.st_mode)) return false;
        const char *slash = strrchr(cur, '/'), *base = slash ? slash + 1 : cur;
        if (!slash) snprintf(dir, sizeof dir, ".");
        else snprintf(dir, sizeof dir, "%.*s", slash == cur ? 1 : (int)(slash - cur), cur);
        if (!realpath(dir, real)) return false;
        if (strncmp(real, "/proc/", 6) == 0) {
            char *end;
            const long pid = strtol(real + 6, &end, 10);
            const char *fd_dir = strrchr(real, '/');
            char *fd_end;
            const long n = strtol(base, &fd_end, 10);
            if (pid == (long)getpid() && fd_dir && strcmp(fd_dir, "/fd") == 0 &&
                (fd_dir == end || strncmp(end, "/task/", 6) == 0) && *base && !*fd_end && n >= 0 && n <= INT_MAX)
                *own_fd = (int)n;
            return true;
        }
        const ssize_t len = readlink(cur, next, sizeof next - 1);
        if (len < 0) return false;
        next[len] = '\0';
        if (next[0] == '/') snprintf(cur, sizeof cur, "%s", next);
        else if (snprintf(cur, sizeof cur, "%s/%s", dir, next) >= (int)sizeof cur) return false;
    }
    return false;
}

int clops_file_begin(clops_file_writer *w, const char *path, mode_t mode, unsigned flags)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (!path) {
        errno = EINVAL;
        return fail(w, "create");
    }
    if (snprintf(w->path, sizeof w->path, "%s", path) >= (int)sizeof w->path) {
        errno = ENAMETOOLONG;
        return fail(w, "create");
    }
    struct stat st;
    bool found = lstat(path, &st) == 0;
    int open_flags = O_NOFOLLOW; /* for a target that is not a link: it must not become one */
    if (found && S_ISLNK(st.st_mode) && (flags & CLOPS_FILE_IN_CACHE)) {
        found = false; /* the cache's own file: the link is replaced, never followed */
    } else if (found && S_ISLNK(st.st_mode)) {
        int own_fd;
        const bool proc = through_proc(path, &own_fd);
        if (stat(path, &st) != 0) return refuse(w, CLOPS_FILE_REFUSED_UNRESOLVED, errno); /* dangling, loop */
        if (!(flags & CLOPS_FILE_IN_PLACE) && !S_ISREG(st.st_mode)) return refuse(w, CLOPS_FILE_REFUSED_KIND, EINVAL);
        if (proc && (flags & CLOPS_FILE_IN_PLACE) && own_fd >= 0 && same_file(own_fd, &st))
            return begin_on_descriptor(w, own_fd); /* else opened by its name, below */
        if (proc && S_ISREG(st.st_mode)) { /* another process's open file: only ever appended to */
            if (!(flags & CLOPS_FILE_IN_PLACE)) return refuse(w, CLOPS_FILE_REFUSED_KIND, EINVAL);
            if (st.st_nlink == 0) return refuse(w, CLOPS_FILE_REFUSED_DELETED, ENOENT);
            return begin_in_place(w, &st, O_APPEND);
        }
        /* An ordinary link: the file it resolves to is the target; the link stays. */
        char resolved[PATH_MAX];
        if (!proc && !realpath(path, resolved)) return refuse(w, CLOPS_FILE_REFUSED_UNRESOLVED, errno);
        if (!proc && snprintf(w->path, sizeof w->path, "%s", resolved) >= (int)sizeof w->path) {
            errno = ENAMETOOLONG;
            return fail(w, "create");
        }
        path = w->path;
        open_flags = 0;
    }
    if (found && !S_ISREG(st.st_mode)) {
        if (!(flags & CLOPS_FILE_IN_PLACE) || !in_place_kind(st.st_mode))
            return refuse(w, CLOPS_FILE_REFUSED_KIND, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
        return begin_in_place(w, &st, open_flags);
    }
    const char *slash = strrchr(path, '/');
    const int dir_len = slash ? (int)(slash - path) + 1 : 0; /* with the slash */
    if (dir_len + 12 >= (int)sizeof w->tmp) {
        errno = ENAMETOOLONG;
        return fail(w, "create");
    }
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        temp_suffix(suffix, attempt);
        snprintf(w->tmp, sizeof w->tmp, "%.*s.tmp-%s", dir_len, path, suffix);
        w->fd = IO_CREATE(w->tmp, mode); /* O_CREAT | O_EXCL: never through a link */
        if (w->fd >= 0) break;
        if (errno != EEXIST) break;
    }
    if (w->fd < 0) {
        w->tmp[0] = '\0';
        return fail(w, "create");
    }
    /* The replacement keeps the old file's permission bits, not its setuid,
     * setgid or sticky bits (it is the writer's file now). */
    if (found && fchmod(w->fd, st.st_mode & 0777) != 0) {
        fail(w, "create");
        clops_file_abort(w);
        return -1;
    }
    return 0;
}

/* One write with SIGPIPE blocked (N12): a pipe or FIFO whose reader left gives
 * EPIPE, never kills the process. The signal such a write raised (it failed with
 * EPIPE or wrote short) is consumed before the caller's mask is restored; one
 * already pending before the write, or pending after a write that went through,
 * is not clops's and is left to the caller. */
static ssize_t write_without_sigpipe(int fd, const void *data, size_t n)
{
    sigset_t pipe_only, pending, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    const bool blocked = pthread_sigmask(SIG_BLOCK, &pipe_only, &old) == 0;
    const bool queued = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    const ssize_t r = IO_WRITE(fd, data, n);
    const int err = errno;
    if (blocked) {
        /* Linux raises SIGPIPE also when a reader leaves during a write that then
         * returns a partial count, so a short write is checked too. */
        const bool broke = r < 0 ? err == EPIPE : (size_t)r < n;
        if (broke && !queued && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
            const struct timespec zero = {0, 0};
            while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {
            }
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    errno = err;
    return r;
}

int clops_file_write(clops_file_writer *w, const void *data, size_t n)
{
    if (w->step) return -1;
    size_t done = 0;
    while (done < n) {
        const ssize_t r = w->in_place ? write_without_sigpipe(w->fd, (const char *)data + done, n - done)
                                      : IO_WRITE(w->fd, (const char *)data + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) { /* a descriptor shared with a caller that made it non-blocking */
            struct pollfd p = {.fd = w->fd, .events = POLLOUT};
            (void)poll(&p, 1, -1);
            continue;
        }
        if (r <= 0) {
            if (r == 0) errno = EIO; /* a write that makes no progress */
            return fail(w, "write");
        }
        done += (size_t)r;
    }
    return 0;
}

int clops_file_printf(clops_file_writer *w, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof line) return clops_file_write(w, line, (size_t)n);
    char *big = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!big) {
        errno = n < 0 ? EINVAL : ENOMEM;
        return fail(w, "write");
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    const int rc = clops_file_write(w, big, (size_t)n);
    free(big);
    return rc;
}

/* Best effort: makes the rename durable by syncing the directory that holds it. */
static void sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[CLOPS_FILE_PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int clops_file_commit(clops_file_writer *w)
{
    if (w->fd < 0) return fail(w, "create");
    if (w->in_place) { /* a device or FIFO: nothing to sync or rename */
        if (close(w->fd) != 0) fail(w, "close");
        w->fd = -1;
        return w->step ? -1 : 0;
    }
    if (!w->step && IO_FSYNC(w->fd) != 0) fail(w, "fsync");
    if (close(w->fd) != 0) fail(w, "close");
    w->fd = -1;
    if (!w->step && IO_RENAME(w->tmp, w->path) != 0) fail(w, "rename");
    if (w->step) {
        unlink(w->tmp);
        return -1;
    }
    sync_dir_of(w->path);
    return 0;
}

void clops_file_abort(clops_file_writer *w)
{
    if (w->fd < 0) return;
    close(w->fd);
    w->fd = -1;
    if (!w->in_place) unlink(w->tmp);
}

int clops_file_write_parts(const char *path, mode_t mode, unsigned flags, const void *const parts[],
                           const size_t sizes[], size_t count, clops_file_writer *w)
{
    clops_file_writer local;
    if (!w) w = &local;
    if (clops_file_begin(w, path, mode, flags) != 0) return -1;
    for (size_t i = 0; i < count; i++) clops_file_write(w, parts[i], sizes[i]);
    return clops_file_commit(w);
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

void clops_file_describe(const clops_file_writer *w, char *out, size_t size)
{
    struct stat st;
    if (w->refusal == CLOPS_FILE_REFUSED_UNRESOLVED)
        snprintf(out, size, "it is a symbolic link that cannot be resolved (%s): it is not replaced",
                 strerror(w->error));
    else if (w->refusal == CLOPS_FILE_REFUSED_DELETED)
        snprintf(out, size, "it leads to an open file that was deleted: nothing was written");
    else if (w->refusal == CLOPS_FILE_REFUSED_CHANGED)
        snprintf(out, size, "it was replaced by another kind of file while it was opened: nothing was written");
    else if (w->refusal == CLOPS_FILE_REFUSED_READ_ONLY)
        snprintf(out, size, "it leads to a descriptor open for reading only: nothing was written");
    else if (strcmp(w->step, "target") == 0 && w->error == ENXIO)
        snprintf(out, size, "it is a FIFO that no process is reading: nothing was written");
    else if (strcmp(w->step, "target") == 0 && stat(w->path, &st) == 0 && !S_ISREG(st.st_mode))
        snprintf(out, size, "it is %s: it is not replaced", kind_of(st.st_mode));
    else if (strcmp(w->step, "create") == 0)
        snprintf(out, size, "cannot create a temporary file beside %s: %s", w->path, strerror(w->error));
    else
        snprintf(out, size, "%s failed: %s", w->step, strerror(w->error));
}

int clops_file_read_exact(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        const ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = EIO; /* the file ended early */
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int clops_file_open_flags(const char *path, uint64_t limit, unsigned flags, int *fd, uint64_t *size)
{
    /* O_NONBLOCK: opening a FIFO never waits for a writer; it is refused below. */
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (flags & CLOPS_FILE_IN_CACHE ? O_NOFOLLOW : 0));
    if (*fd < 0) return -1;
    struct stat st;
    int err = 0;
    if (fstat(*fd, &st) != 0) err = errno;
    else if (!S_ISREG(st.st_mode)) err = EINVAL;
    else if ((uint64_t)st.st_size > limit) err = EFBIG;
    if (err) {
        close(*fd);
        *fd = -1;
        errno = err;
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

int clops_file_open(const char *path, uint64_t limit, int *fd, uint64_t *size)
{
    return clops_file_open_flags(path, limit, 0, fd, size);
}

int clops_file_read_flags(const char *path, uint64_t limit, unsigned flags, unsigned char **data, size_t *size)
{
    *data = NULL;
    int fd;
    uint64_t bytes;
    if (clops_file_open_flags(path, limit, flags, &fd, &bytes) != 0) return -1;
    int rc = -1;
    if (bytes <= SIZE_MAX - 1 && (*data = malloc(bytes ? (size_t)bytes : 1)) != NULL &&
        clops_file_read_exact(fd, *data, (size_t)bytes) == 0) {
        *size = (size_t)bytes;
        rc = 0;
    }
    close(fd);
    if (rc != 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int clops_file_read(const char *path, uint64_t limit, unsigned char **data, size_t *size)
{
    return clops_file_read_flags(path, limit, 0, data, size);
}

/* ---- positioned writes and scratch files (store/pack.c) ------------------------------------ */

int clops_file_write_at(int fd, uint64_t offset, const void *data, size_t n)
{
    if (offset > (uint64_t)INT64_MAX || lseek(fd, (off_t)offset, SEEK_SET) < 0) {
        if (offset > (uint64_t)INT64_MAX) errno = EFBIG;
        return -1;
    }
    for (size_t done = 0; done < n;) {
        const ssize_t r = IO_WRITE(fd, (const char *)data + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = EIO; /* a write that makes no progress */
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

int clops_file_patch(clops_file_writer *w, uint64_t offset, const void *data, size_t n)
{
    if (w->step) return -1;
    if (w->in_place) { /* a pipe or device: what was sent stays sent */
        errno = ESPIPE;
        return fail(w, "write");
    }
    if (clops_file_write_at(w->fd, offset, data, n) != 0 || lseek(w->fd, 0, SEEK_END) < 0) return fail(w, "write");
    return 0;
}

int clops_file_scratch(const char *dir, int *write_fd, int *read_fd)
{
    *write_fd = *read_fd = -1;
    char path[CLOPS_FILE_PATH_MAX];
    for (unsigned attempt = 0; attempt < 100 && *write_fd < 0; attempt++) {
        char suffix[7];
        temp_suffix(suffix, attempt);
        if (snprintf(path, sizeof path, "%s/.tmp-%s", dir, suffix) >= (int)sizeof path) {
            errno = ENAMETOOLONG;
            return -1;
        }
        *write_fd = IO_CREATE(path, 0600); /* O_CREAT | O_EXCL | O_CLOEXEC */
        if (*write_fd < 0 && errno != EEXIST) return -1;
    }
    if (*write_fd < 0) return -1;
    /* The same file for reading: opened by its name before the name goes, and
     * checked to be the file just created. */
    *read_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    const int err = errno;
    struct stat a, b;
    const bool same = *read_fd >= 0 && fstat(*write_fd, &a) == 0 && fstat(*read_fd, &b) == 0 &&
                      a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    unlink(path);
    if (same) return 0;
    const int why = *read_fd < 0 ? err : EEXIST; /* EEXIST: another file took the name */
    close(*write_fd);
    if (*read_fd >= 0) close(*read_fd);
    *write_fd = *read_fd = -1;
    errno = why;
    return -1;
}

/* ---- exclusive locks (store/tune_db.c, store/pack.c) --------------------------------------- */

int clops_file_lock_take(clops_file_lock *l, const char *path, pthread_mutex_t *mutex)
{
    l->fd = -1;
    l->mutex = mutex;
    pthread_mutex_lock(mutex);
    int fd, rc, err = 0;
    for (int links = 0;;) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        /* A symbolic link in the lock's place is removed (the link, not what it
         * names), never followed: as root it would create any file (N3). */
        if (fd < 0 && errno == ELOOP && links++ < 3 && unlink(path) == 0) continue;
        struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        rc = fd < 0 ? -1 : 0;
        if (fd < 0) err = errno;
        while (rc == 0 && fcntl(fd, F_SETLKW, &lk) != 0)
            if (errno != EINTR) rc = -1, err = errno;
        /* A lock file removed while we waited (cache clear, a holder releasing
         * with `remove`): the lock is on a removed file and excludes no one; take anew. */
        struct stat held, named;
        if (rc != 0 || (fstat(fd, &held) == 0 && lstat(path, &named) == 0 && held.st_ino == named.st_ino &&
                        held.st_dev == named.st_dev))
            break;
        close(fd);
    }
    if (rc == 0) {
        l->fd = fd;
        return 0;
    }
    if (fd >= 0) close(fd);
    pthread_mutex_unlock(mutex);
    errno = err;
    return -1;
}

void clops_file_lock_release(clops_file_lock *l, const char *path, bool remove)
{
    if (l->fd < 0) return;
    if (remove) unlink(path); /* while held: a waiter finds it gone and takes a new one */
    close(l->fd);             /* releases the fcntl lock */
    l->fd = -1;
    pthread_mutex_unlock(l->mutex);
}

void clops_file_lock_remove_unheld(const char *path, pthread_mutex_t *mutex)
{
    pthread_mutex_lock(mutex);
    const int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ELOOP) unlink(path); /* a link planted there: the link goes (N3) */
    if (fd >= 0) {
        struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(fd, F_SETLK, &lk) == 0) unlink(path);
        close(fd);
    }
    pthread_mutex_unlock(mutex);
}
