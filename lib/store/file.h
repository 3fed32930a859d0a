/* file.h - the one way clops writes a file and the one way it reads one (file.c).
 *
 * Every file clops writes - program cache entries, kernel packs, the tuning
 * database, the CLI's .npy outputs - goes through clops_file_writer: the bytes go
 * to a new temporary file ".tmp-XXXXXX" in the target's directory, which is
 * fsync'ed, closed and renamed over the target, and the directory is then
 * fsync'ed (best effort). Readers see the old file or the new one, never a torn
 * one. On any failure the temporary file is removed and the target is untouched.
 * A target that exists and is not a regular file (a device, a FIFO, a
 * directory) is refused, never replaced.
 *
 * Every file clops reads goes through clops_file_open (clops_file_read reads it
 * whole): the descriptor, not the name, is fstat'ed, and anything but a regular
 * file within a size limit is refused before a byte is read.
 *
 * The library reaches the file system through lib/cl_api.h's seam (tests make
 * any step fail); the tools compile this same file and call libc directly.
 * Internal: not installed. */
#ifndef CLOPS_STORE_FILE_H
#define CLOPS_STORE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLOPS_FILE_PATH_MAX 4200

/* A file being written. Fields are for file.c and for messages: `step` names the
 * step that failed ("target": not a regular file, "create", "write", "fsync",
 * "close", "rename") and `error` its errno. */
typedef struct clops_file_writer {
    int fd;
    const char *step;
    int error;
    char path[CLOPS_FILE_PATH_MAX];
    char tmp[CLOPS_FILE_PATH_MAX];
} clops_file_writer;

/* Creates the temporary file for `path` with `mode` (less the umask), e.g. 0600
 * for the cache's files and 0666 for user outputs. 0, or -1 with `step` set. */
int clops_file_begin(clops_file_writer *w, const char *path, mode_t mode);
/* Appends `n` bytes; after a failure it does nothing and returns -1. */
int clops_file_write(clops_file_writer *w, const void *data, size_t n);
/* Appends formatted text, as clops_file_write. */
int clops_file_printf(clops_file_writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Overwrites `n` bytes at `offset` of what was written (a header whose counts
 * are known only at the end), as clops_file_write; the next write appends. */
int clops_file_patch(clops_file_writer *w, uint64_t offset, const void *data, size_t n);
/* Syncs, closes and renames the temporary file over the target; if any step
 * (including an earlier write) failed, removes the temporary file instead.
 * 0, or -1 with `step` and `error` set. The writer is finished either way. */
int clops_file_commit(clops_file_writer *w);
/* Abandons the file: the temporary file is removed, the target untouched. */
void clops_file_abort(clops_file_writer *w);

/* Writes the `count` byte ranges `parts[i]` (`sizes[i]` bytes) as one file, with
 * begin, write and commit above. 0, or -1 with `*w` saying what failed (w may
 * be NULL). */
int clops_file_write_parts(const char *path, mode_t mode, const void *const parts[], const size_t sizes[],
                           size_t count, clops_file_writer *w);

/* Opens `path` for reading if it is a regular file of at most `limit` bytes:
 * 0 with `*fd` and `*size`, else -1 (errno set; EFBIG past the limit, EINVAL
 * for a file that is not regular). The caller closes `*fd`. */
int clops_file_open(const char *path, uint64_t limit, int *fd, uint64_t *size);
/* Reads a whole regular file of at most `limit` bytes into memory (freed by the
 * caller; `*data` is NULL on failure). 0 or -1. */
int clops_file_read(const char *path, uint64_t limit, unsigned char **data, size_t *size);

#endif
