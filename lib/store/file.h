/* file.h - the one way clops writes a file and the one way it reads one (file.c).
 *
 * Every file clops writes - program cache entries, kernel packs, the tuning
 * database, the CLI's .npy outputs - goes through clops_file_writer. A regular
 * file (or a missing one) is replaced atomically: the bytes go to a new
 * temporary file ".tmp-XXXXXX" (created with O_EXCL, so never through a link)
 * in the target's directory, which takes the old file's permission bits (not
 * its setuid, setgid or sticky bits), is
 * fsync'ed, closed and renamed over the target, and the directory is then
 * fsync'ed (best effort). Readers see the old file or the new one, never a torn
 * one. On any failure the temporary file is removed and the target is untouched.
 *
 * Symbolic links (N1), as a careful system tool treats them:
 *  - a link to a regular file is followed: the file it resolves to is replaced
 *    atomically, the link stays a link;
 *  - a link through /proc (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/PID/fd/N:
 *    an open file, not a name) is written in place: this process's own
 *    descriptor is written through (its offset and O_APPEND, so
 *    `clops run ... /dev/stdout >> log` appends to log), another process's
 *    regular file is opened with O_APPEND; one that leads to a deleted file is
 *    refused;
 *  - a link that cannot be resolved (dangling, a loop) is refused, never replaced;
 *  - with CLOPS_FILE_IN_CACHE (the cache's own files) a link is never followed:
 *    it is replaced like a file (rename replaces the link, not what it names).
 *
 * A target that exists and is not a regular file is never replaced. With
 * CLOPS_FILE_IN_PLACE (user-named outputs and packs) a character device
 * (/dev/null, /dev/stdout's terminal or pipe) or a FIFO is written in place; a
 * FIFO is opened without blocking, so one that has no reader is refused at once
 * (ENXIO, "no process is reading it") instead of waiting for one. The opened
 * descriptor is fstat'ed: a regular file put in its place between the check and
 * the open is refused (N13). What was written to a device or FIFO before a
 * failure cannot be taken back; writes in place block SIGPIPE, so a reader that
 * leaves gives EPIPE, never kills the process (N12). Directories, block devices
 * and sockets are always refused; without the flag (the cache's own files)
 * everything but a regular file is refused.
 *
 * Every file clops reads goes through clops_file_open (clops_file_read reads it
 * whole): it is opened without blocking (a FIFO never hangs the caller), the
 * descriptor, not the name, is fstat'ed, and anything but a regular file within
 * a size limit is refused before a byte is read.
 *
 * The library reaches the file system through lib/cl_api.h's seam (tests make
 * any step fail); the tools compile this same file and call libc directly.
 * Internal: not installed. */
#ifndef CLOPS_STORE_FILE_H
#define CLOPS_STORE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define CLOPS_FILE_PATH_MAX 4200

/* clops_file_begin's flags. */
#define CLOPS_FILE_IN_PLACE 1u /* write a character device or a FIFO in place */
#define CLOPS_FILE_IN_CACHE 2u /* a file of the cache's own directory: a link there is never followed */

/* Why a target was refused (clops_file_writer.refusal). */
enum {
    CLOPS_FILE_REFUSED_NONE,
    CLOPS_FILE_REFUSED_KIND,       /* not a kind of file this writer replaces or writes */
    CLOPS_FILE_REFUSED_UNRESOLVED, /* a symbolic link that cannot be resolved */
    CLOPS_FILE_REFUSED_DELETED,    /* a link through /proc to a file that was deleted */
    CLOPS_FILE_REFUSED_CHANGED,    /* another kind of file by the time it was opened */
    CLOPS_FILE_REFUSED_READ_ONLY,  /* a descriptor of this process open for reading only */
};

/* A file being written. Fields are for file.c and for messages: `step` names the
 * step that failed ("target": a file that is not replaced, "create", "write",
 * "fsync", "close", "rename") and `error` its errno. */
typedef struct clops_file_writer {
    int fd;
    bool in_place; /* writing a device or FIFO directly: no temporary file */
    int refusal;   /* CLOPS_FILE_REFUSED_*, with step "target" */
    const char *step;
    int error;
    char path[CLOPS_FILE_PATH_MAX];
    char tmp[CLOPS_FILE_PATH_MAX];
} clops_file_writer;

/* Creates the temporary file for `path` with `mode` (less the umask), e.g. 0600
 * for the cache's files and 0666 for user outputs; replacing a regular file keeps
 * its permission bits instead. `flags`: 0, CLOPS_FILE_IN_PLACE or CLOPS_FILE_IN_CACHE. 0, or -1 with
 * `step` set. */
int clops_file_begin(clops_file_writer *w, const char *path, mode_t mode, unsigned flags);
/* Appends `n` bytes; after a failure it does nothing and returns -1. */
int clops_file_write(clops_file_writer *w, const void *data, size_t n);
/* Appends formatted text, as clops_file_write. */
int clops_file_printf(clops_file_writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Syncs, closes and renames the temporary file over the target; if any step
 * (including an earlier write) failed, removes the temporary file instead.
 * 0, or -1 with `step` and `error` set. The writer is finished either way. */
int clops_file_commit(clops_file_writer *w);
/* Abandons the file: the temporary file is removed, the target untouched. */
void clops_file_abort(clops_file_writer *w);

/* Writes the `count` byte ranges `parts[i]` (`sizes[i]` bytes) as one file, with
 * begin, write and commit above. 0, or -1 with `*w` saying what failed (w may
 * be NULL). */
int clops_file_write_parts(const char *path, mode_t mode, unsigned flags, const void *const parts[],
                           const size_t sizes[], size_t count, clops_file_writer *w);
/* One line saying why the writer failed, e.g. "it is a block device: it is
 * not replaced" or "write failed: No space left on device". */
void clops_file_describe(const clops_file_writer *w, char *out, size_t size);

/* Opens `path` for reading if it is a regular file of at most `limit` bytes:
 * 0 with `*fd` and `*size`, else -1 (errno set; EFBIG past the limit, EINVAL
 * for a file that is not regular). The caller closes `*fd`. */
int clops_file_open(const char *path, uint64_t limit, int *fd, uint64_t *size);
/* The same; with CLOPS_FILE_IN_CACHE a symbolic link is not followed (ELOOP). */
int clops_file_open_flags(const char *path, uint64_t limit, unsigned flags, int *fd, uint64_t *size);
/* Reads exactly `n` bytes from `fd`: 0, or -1 at an error or end of file. */
int clops_file_read_exact(int fd, void *buf, size_t n);
/* Reads a whole regular file of at most `limit` bytes into memory (freed by the
 * caller; `*data` is NULL on failure). 0 or -1. */
int clops_file_read(const char *path, uint64_t limit, unsigned char **data, size_t *size);
/* The same with clops_file_open_flags' flags. */
int clops_file_read_flags(const char *path, uint64_t limit, unsigned flags, unsigned char **data, size_t *size);

/* ---- positioned writes and scratch files (store/pack.c) ----------------------------------- */

/* Writes all `n` bytes at `offset` of the regular file open as `fd`, through
 * the seam's write (the file position moves): 0, or -1 with errno. */
int clops_file_write_at(int fd, uint64_t offset, const void *data, size_t n);
/* Overwrites `n` bytes at `offset` of the file a writer is writing (a count in
 * its header), then goes on at its end. A writer writing in place (a pipe or
 * device) cannot be patched (ESPIPE). 0, or -1 with `step` "write" and `error`;
 * after an earlier failure it does nothing and returns -1. */
int clops_file_patch(clops_file_writer *w, uint64_t offset, const void *data, size_t n);
/* A private scratch file in `dir`: created like the writer's temporary files
 * (".tmp-XXXXXX", O_EXCL, close-on-exec, mode 0600, through the seam), opened
 * once more for reading, and unlinked at once, so no other process sees it and
 * nothing stays after a crash. 0 with both descriptors (the caller closes
 * them), or -1 with errno. */
int clops_file_scratch(const char *dir, int *write_fd, int *read_fd);

/* ---- exclusive locks (store/tune_db.c, store/pack.c) --------------------------------------- */

/* An exclusive lock for a read-merge-replace of a file (the tuning database, a
 * pack): the file itself is replaced by rename and cannot hold it, so the lock
 * is a file of its own (`path`, e.g. "<file>.lock"), created if missing (mode
 * 0600 less the umask). It is opened with O_NOFOLLOW: a symbolic link in its
 * place is removed (the link, not what it names), never followed (N3). Other
 * processes are excluded by an fcntl write lock (waited for); threads of this
 * process by `mutex`, held with it (fcntl locks belong to the process, and
 * closing any descriptor of the lock file would drop one), so every lock file
 * of one kind takes the same mutex. A lock file removed while a taker waited
 * (cache clear, or a holder releasing with `remove`) is taken anew: the lock
 * held is always on the file the path names. */
typedef struct clops_file_lock {
    int fd;
    pthread_mutex_t *mutex;
} clops_file_lock;

/* Waits for and takes the lock: 0, or -1 with errno (nothing held). */
int clops_file_lock_take(clops_file_lock *l, const char *path, pthread_mutex_t *mutex);
/* Releases a lock taken; with `remove`, the lock file (`path`, as taken) is
 * removed first, so none stays beside the file it guards. */
void clops_file_lock_release(clops_file_lock *l, const char *path, bool remove);
/* Removes the lock file `path` if no process holds it (taking `mutex` while it
 * looks, so no thread of this process holds it either); a link there is removed. */
void clops_file_lock_remove_unheld(const char *path, pthread_mutex_t *mutex);

#endif
