/*
 * npy.h - a small reader and writer for NumPy's .npy files, without NumPy.
 *
 * Reads format versions 1.0, 2.0 and 3.0 of little-endian (or byte-sized)
 * arrays of the fixed-width types clops knows, in C or Fortran order, with up
 * to NPY_MAX_DIMS dimensions. Every malformed file is rejected with its own
 * status and a one-line message; nothing here prints or exits. Allocations are
 * bounded by the file's real size, never by what its header claims.
 *
 * Writes version 1.0, C order, byte for byte as numpy.save() does (header
 * padded so the data starts at a multiple of 64 bytes), through a temporary
 * file in the same directory that is fsync'ed and renamed into place.
 *
 * BFLOAT16 has no NumPy dtype: it is read from a 2-byte file ('<u2', '<i2' or
 * '<f2') when the caller asks for it, and written as '<u2'.
 */
#ifndef CLOPS_TOOLS_NPY_H
#define CLOPS_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <clops/clops.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 32
/* Largest header accepted (bytes after the length field). numpy itself refuses
 * more than 10000 by default; a 32-dimension header needs under 1000. */
#define NPY_MAX_HEADER_LEN (1u << 20)
/* A buffer this large always holds a full message. */
#define NPY_MESSAGE_SIZE 8192 /* any message: it names at most one path, and paths are at most 4200 bytes */

/* X(name, message): the status codes and their fixed sentences. */
#define NPY_STATUS_TABLE(X)                                                              \
    X(NPY_OK, "success")                                                                 \
    X(NPY_ERR_ARGUMENT, "invalid argument")                                              \
    X(NPY_ERR_IO, "input/output error")                                                  \
    X(NPY_ERR_NOT_REGULAR_FILE, "not a regular file")                                    \
    X(NPY_ERR_NO_MEMORY, "out of memory")                                                \
    X(NPY_ERR_BAD_MAGIC, "not a .npy file (wrong magic string)")                         \
    X(NPY_ERR_BAD_VERSION, "unsupported .npy format version")                            \
    X(NPY_ERR_TRUNCATED_HEADER, "header truncated")                                      \
    X(NPY_ERR_HEADER_TOO_LARGE, "header length too large")                               \
    X(NPY_ERR_MALFORMED_HEADER, "malformed header dictionary")                           \
    X(NPY_ERR_UNKNOWN_DTYPE, "unknown or unsupported dtype")                             \
    X(NPY_ERR_OBJECT_DTYPE, "object arrays (dtype '|O') are not supported")              \
    X(NPY_ERR_BIG_ENDIAN, "big-endian dtypes are not supported")                         \
    X(NPY_ERR_BAD_SHAPE, "invalid shape")                                                \
    X(NPY_ERR_OVERFLOW, "element or byte count overflows")                               \
    X(NPY_ERR_TRUNCATED_DATA, "data shorter than the shape requires")                    \
    X(NPY_ERR_TRAILING_DATA, "extra bytes after the data")                               \
    X(NPY_ERR_TYPE_OVERRIDE, "type override does not fit the file's dtype")              \
    X(NPY_ERR_WRITE, "could not write the file")

typedef enum npy_status {
#define NPY_X_ENUM(name, msg) name,
    NPY_STATUS_TABLE(NPY_X_ENUM)
#undef NPY_X_ENUM
    NPY_STATUS_COUNT
} npy_status;

/* An array read from a file. `data` holds the file's bytes unchanged. */
typedef struct npy_array {
    clops_data_type data_type;     /* after any override */
    char descr[8];                 /* the dtype string as the file spelled it */
    size_t itemsize;               /* bytes per element */
    unsigned ndim;                 /* 0 .. NPY_MAX_DIMS */
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t strides[NPY_MAX_DIMS]; /* in elements: C order, or (1, d0, d0*d1, ...) */
    int fortran_order;
    uint64_t count;                /* elements */
    size_t nbytes;                 /* count * itemsize */
    void *data;                    /* malloc'ed, nbytes (at least 1 byte allocated) */
} npy_array;

/*! npy_status_name() : "NPY_ERR_BAD_MAGIC", ...; "NPY_UNKNOWN_STATUS" if out of range. */
const char *npy_status_name(npy_status status);

/*! npy_status_message() : a fixed sentence for the status. Never NULL. */
const char *npy_status_message(npy_status status);

/*! npy_read() : reads `path` into `*out` (zeroed first; free with npy_free even on error).
 *  `type_override` is CLOPS_DATA_TYPE_UNKNOWN for none, or CLOPS_DATA_TYPE_BFLOAT16 to
 *  read a '<u2'/'<i2'/'<f2' file as BFLOAT16. On failure writes a one-line message
 *  (without the path) to `msg` (if not NULL). @return NPY_OK or the specific error. */
npy_status npy_read(const char *path, clops_data_type type_override, npy_array *out, char *msg,
                    size_t msg_size);

/*! npy_free() : frees the data of an array from npy_read() and zeroes it. NULL is fine. */
void npy_free(npy_array *array);

/*! npy_descr() : the dtype string npy_write_atomic() writes for `type` ("<f4", "|b1",
 *  "<u2" for BFLOAT16), or NULL if the type has none. */
const char *npy_descr(clops_data_type type);

/*! npy_format_header() : writes the version 1.0 preamble and header numpy.save() would
 *  write for a C-order array into `buf` (`*len` receives its length, a multiple of 64).
 *  @return NPY_OK, NPY_ERR_ARGUMENT (bad type, ndim, or buffer too small). */
npy_status npy_format_header(clops_data_type type, unsigned ndim, const uint64_t *shape, char *buf,
                             size_t buf_size, size_t *len);

/*! npy_write_atomic() : writes a C-order array to `path` through a temporary file in the
 *  same directory, fsync'ed and renamed over `path` keeping its permission bits
 *  (lib/store/file.c, the library's writer). On failure the temporary file is removed
 *  and `path` is left as it was. A `path` that is a character device (/dev/null) or a
 *  FIFO with a reader is written in place; a FIFO without a reader, a directory, a
 *  block device or a socket is refused at once, never replaced.
 *  `nbytes` must equal product(shape) * itemsize.
 *  @return NPY_OK, NPY_ERR_ARGUMENT, NPY_ERR_OVERFLOW or NPY_ERR_WRITE (message in msg). */
npy_status npy_write_atomic(const char *path, clops_data_type type, unsigned ndim,
                            const uint64_t *shape, const void *data, size_t nbytes, char *msg,
                            size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_TOOLS_NPY_H */
