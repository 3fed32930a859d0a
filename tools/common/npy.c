/*
 * npy.c - .npy reader and writer (see npy.h).
 *
 * Reading goes: fstat for the real size, the fixed preamble, the header (its
 * claimed length checked against the file first), the header dictionary, the
 * data size (checked multiplication) against the bytes actually left, and only
 * then the one data allocation.
 */
#define _POSIX_C_SOURCE 200809L

#include "npy.h"
#include "core/checked.h"
#include "store/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
#define NPY_GROWTH_AXIS_MAX_DIGITS 21 /* numpy's spare room after the dictionary */

/* ---- status names and messages ------------------------------------------------------ */

static const char *const status_names[] = {
#define NPY_X_NAME(name, msg) #name,
    NPY_STATUS_TABLE(NPY_X_NAME)
#undef NPY_X_NAME
};

static const char *const status_messages[] = {
#define NPY_X_MSG(name, msg) msg,
    NPY_STATUS_TABLE(NPY_X_MSG)
#undef NPY_X_MSG
};

const char *npy_status_name(npy_status status)
{
    if ((int)status < 0 || status >= NPY_STATUS_COUNT)
        return "NPY_UNKNOWN_STATUS";
    return status_names[status];
}

const char *npy_status_message(npy_status status)
{
    if ((int)status < 0 || status >= NPY_STATUS_COUNT)
        return "unknown status";
    return status_messages[status];
}

/* Formats a one-line message into msg (if any) and returns status. */
static npy_status fail(npy_status status, char *msg, size_t msg_size, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static npy_status fail(npy_status status, char *msg, size_t msg_size, const char *fmt, ...)
{
    if (msg != NULL && msg_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, msg_size, fmt, ap);
        va_end(ap);
        for (char *c = msg; *c != '\0'; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' ';
    }
    return status;
}

/* Copies at most 40 bytes of untrusted header text into out, printable ASCII only. */
static void sanitize(const char *s, size_t len, char *out, size_t out_size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < out_size && i < 40; i++)
        out[n++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (len > 40 && n + 4 < out_size) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

/* ---- checked arithmetic ---------------------------------------------------------------- */

/* 0, or -1 when the product overflows (the rule is lib/core/checked.h's). */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return clops_mul_u64(a, b, out) ? 0 : -1;
}

/* ---- dtypes ---------------------------------------------------------------------------- */

typedef struct dtype_entry {
    const char *code; /* without the byte-order character */
    clops_data_type type;
    size_t size;
    const char *descr; /* what numpy writes */
} dtype_entry;

static const dtype_entry dtypes[] = {
    {"b1", CLOPS_DATA_TYPE_BOOL, 1, "|b1"},        {"i1", CLOPS_DATA_TYPE_INT8, 1, "|i1"},
    {"u1", CLOPS_DATA_TYPE_UINT8, 1, "|u1"},       {"i2", CLOPS_DATA_TYPE_INT16, 2, "<i2"},
    {"u2", CLOPS_DATA_TYPE_UINT16, 2, "<u2"},      {"f2", CLOPS_DATA_TYPE_FLOAT16, 2, "<f2"},
    {"i4", CLOPS_DATA_TYPE_INT32, 4, "<i4"},       {"u4", CLOPS_DATA_TYPE_UINT32, 4, "<u4"},
    {"f4", CLOPS_DATA_TYPE_FLOAT32, 4, "<f4"},     {"i8", CLOPS_DATA_TYPE_INT64, 8, "<i8"},
    {"u8", CLOPS_DATA_TYPE_UINT64, 8, "<u8"},      {"f8", CLOPS_DATA_TYPE_FLOAT64, 8, "<f8"},
    {"c8", CLOPS_DATA_TYPE_COMPLEX64, 8, "<c8"},   {"c16", CLOPS_DATA_TYPE_COMPLEX128, 16, "<c16"},
};
#define DTYPE_COUNT (sizeof(dtypes) / sizeof(dtypes[0]))

const char *npy_descr(clops_data_type type)
{
    if (type == CLOPS_DATA_TYPE_BFLOAT16)
        return "<u2";
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (dtypes[i].type == type)
            return dtypes[i].descr;
    return NULL;
}

static size_t type_size(clops_data_type type)
{
    if (type == CLOPS_DATA_TYPE_BFLOAT16)
        return 2;
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (dtypes[i].type == type)
            return dtypes[i].size;
    return 0;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Maps a descr string ("<f4", "|u1", ...) to its entry. */
static npy_status lookup_descr(const char *s, size_t len, const dtype_entry **entry, char *msg,
                               size_t msg_size)
{
    char shown[64];
    sanitize(s, len, shown, sizeof shown);
    char order = '=';
    const char *code = s;
    size_t code_len = len;
    if (len > 0 && strchr("<>|=", s[0]) != NULL) {
        order = s[0];
        code++;
        code_len--;
    }
    if (code_len > 0 && code[0] == 'O')
        return fail(NPY_ERR_OBJECT_DTYPE, msg, msg_size,
                    "object dtype '%s' is not supported (pickled Python objects)", shown);
    for (size_t i = 0; i < DTYPE_COUNT; i++) {
        if (strlen(dtypes[i].code) != code_len || memcmp(dtypes[i].code, code, code_len) != 0)
            continue;
        int little = order == '<' || ((order == '=' || order == '|') && host_is_little_endian());
        if (dtypes[i].size > 1 && !little)
            return fail(NPY_ERR_BIG_ENDIAN, msg, msg_size,
                        "big-endian dtype '%s' is not supported (save it as '<%s')", shown,
                        dtypes[i].code);
        *entry = &dtypes[i];
        return NPY_OK;
    }
    return fail(NPY_ERR_UNKNOWN_DTYPE, msg, msg_size, "unknown or unsupported dtype '%s'", shown);
}

/* ---- header dictionary parser ------------------------------------------------------------ */

typedef struct cursor {
    const char *p;
    const char *end;
} cursor;

typedef struct header_fields {
    const dtype_entry *dtype;
    char descr[8];
    int fortran_order;
    unsigned ndim;
    uint64_t shape[NPY_MAX_DIMS];
    unsigned seen; /* bit 0 descr, bit 1 fortran_order, bit 2 shape */
} header_fields;

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int accept_char(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A Python string literal in single or double quotes, without escapes. */
static npy_status parse_string(cursor *c, const char **s, size_t *len, char *msg, size_t msg_size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size, "malformed header: expected a string");
    char quote = *c->p++;
    const char *start = c->p;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n')
            return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                        "malformed header: escape or newline inside a string");
        c->p++;
    }
    if (c->p >= c->end)
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size, "malformed header: unterminated string");
    *s = start;
    *len = (size_t)(c->p - start);
    c->p++;
    return NPY_OK;
}

static npy_status parse_descr(cursor *c, header_fields *h, char *msg, size_t msg_size)
{
    skip_space(c);
    if (c->p < c->end && (*c->p == '[' || *c->p == '('))
        return fail(NPY_ERR_UNKNOWN_DTYPE, msg, msg_size,
                    "structured or sub-array dtypes are not supported");
    const char *s;
    size_t len;
    npy_status st = parse_string(c, &s, &len, msg, msg_size);
    if (st != NPY_OK)
        return st;
    st = lookup_descr(s, len, &h->dtype, msg, msg_size);
    if (st != NPY_OK)
        return st;
    memcpy(h->descr, s, len); /* len <= 4 for every known dtype */
    h->descr[len] = '\0';
    return NPY_OK;
}

static npy_status parse_bool(cursor *c, header_fields *h, char *msg, size_t msg_size)
{
    skip_space(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        h->fortran_order = 1;
        c->p += 4;
    } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        h->fortran_order = 0;
        c->p += 5;
    } else {
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                    "malformed header: fortran_order is not True or False");
    }
    if (c->p < c->end && (*c->p == '_' || (*c->p >= 'A' && *c->p <= 'Z') ||
                          (*c->p >= 'a' && *c->p <= 'z') || (*c->p >= '0' && *c->p <= '9')))
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                    "malformed header: fortran_order is not True or False");
    return NPY_OK;
}

/* One dimension: a non-negative decimal integer (a Python 2 'L' suffix is accepted). */
static npy_status parse_dim(cursor *c, uint64_t *dim, char *msg, size_t msg_size)
{
    skip_space(c);
    if (c->p < c->end && *c->p == '-')
        return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: negative dimension");
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: dimension is not an integer");
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned digit = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return fail(NPY_ERR_OVERFLOW, msg, msg_size, "shape dimension overflows 64 bits");
        v = v * 10 + digit;
        c->p++;
    }
    if (c->p < c->end && *c->p == 'L')
        c->p++;
    if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E' || *c->p == 'x' ||
                          *c->p == 'j' || *c->p == '_'))
        return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: dimension is not an integer");
    if (v > (uint64_t)INT64_MAX)
        return fail(NPY_ERR_OVERFLOW, msg, msg_size, "shape dimension %llu exceeds 2^63-1",
                    (unsigned long long)v);
    *dim = v;
    return NPY_OK;
}

/* A Python tuple of integers: "()", "(3,)", "(1, 2, 3)" with an optional trailing comma. */
static npy_status parse_shape(cursor *c, header_fields *h, char *msg, size_t msg_size)
{
    if (!accept_char(c, '('))
        return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: not a tuple");
    h->ndim = 0;
    if (accept_char(c, ')'))
        return NPY_OK;
    for (;;) {
        if (h->ndim == NPY_MAX_DIMS)
            return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: more than %d dimensions",
                        NPY_MAX_DIMS);
        npy_status st = parse_dim(c, &h->shape[h->ndim], msg, msg_size);
        if (st != NPY_OK)
            return st;
        h->ndim++;
        if (accept_char(c, ')')) {
            if (h->ndim == 1) /* "(3)" is an int in Python, not a tuple */
                return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: not a tuple");
            return NPY_OK;
        }
        if (!accept_char(c, ','))
            return fail(NPY_ERR_BAD_SHAPE, msg, msg_size, "invalid shape: expected ',' or ')'");
        if (accept_char(c, ')'))
            return NPY_OK;
    }
}

static npy_status parse_entry(cursor *c, header_fields *h, char *msg, size_t msg_size)
{
    const char *key;
    size_t len;
    npy_status st = parse_string(c, &key, &len, msg, msg_size);
    if (st != NPY_OK)
        return st;
    if (!accept_char(c, ':'))
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size, "malformed header: expected ':'");
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (unsigned k = 0; k < 3; k++) {
        if (strlen(keys[k]) != len || memcmp(keys[k], key, len) != 0)
            continue;
        if (h->seen & (1u << k))
            return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                        "malformed header: duplicate key '%s'", keys[k]);
        h->seen |= 1u << k;
        if (k == 0)
            return parse_descr(c, h, msg, msg_size);
        if (k == 1)
            return parse_bool(c, h, msg, msg_size);
        return parse_shape(c, h, msg, msg_size);
    }
    char shown[64];
    sanitize(key, len, shown, sizeof shown);
    return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size, "malformed header: unexpected key '%s'",
                shown);
}

/* The whole header: "{'descr': ..., 'fortran_order': ..., 'shape': (...), }" + blanks. */
static npy_status parse_header(const char *text, size_t len, header_fields *h, char *msg,
                               size_t msg_size)
{
    cursor c = {text, text + len};
    memset(h, 0, sizeof *h);
    if (memchr(text, '\0', len) != NULL)
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size, "malformed header: contains a NUL byte");
    if (!accept_char(&c, '{'))
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                    "malformed header: not a dictionary (no '{')");
    while (!accept_char(&c, '}')) {
        npy_status st = parse_entry(&c, h, msg, msg_size);
        if (st != NPY_OK)
            return st;
        if (accept_char(&c, '}'))
            break;
        if (!accept_char(&c, ','))
            return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                        "malformed header: expected ',' or '}'");
    }
    skip_space(&c);
    if (c.p != c.end)
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size,
                    "malformed header: text after the dictionary");
    if (h->seen != 7u)
        return fail(NPY_ERR_MALFORMED_HEADER, msg, msg_size, "malformed header: missing key '%s'",
                    !(h->seen & 1u) ? "descr" : !(h->seen & 2u) ? "fortran_order" : "shape");
    return NPY_OK;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Reads up to n bytes, retrying short reads and EINTR. Returns bytes read or -1. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, (char *)buf + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

static npy_status apply_override(npy_array *a, clops_data_type type_override, char *msg,
                                 size_t msg_size)
{
    if (type_override == CLOPS_DATA_TYPE_UNKNOWN)
        return NPY_OK;
    if (type_override != CLOPS_DATA_TYPE_BFLOAT16)
        return fail(NPY_ERR_TYPE_OVERRIDE, msg, msg_size,
                    "only bfloat16 can be given as a type override");
    if (a->data_type != CLOPS_DATA_TYPE_UINT16 && a->data_type != CLOPS_DATA_TYPE_INT16 &&
        a->data_type != CLOPS_DATA_TYPE_FLOAT16)
        return fail(NPY_ERR_TYPE_OVERRIDE, msg, msg_size,
                    "bfloat16 needs a 2-byte dtype ('<u2', '<i2' or '<f2'), not '%s'", a->descr);
    a->data_type = CLOPS_DATA_TYPE_BFLOAT16;
    return NPY_OK;
}

/* Element count, byte count and element strides, all with checked arithmetic. */
static npy_status compute_layout(npy_array *a, char *msg, size_t msg_size)
{
    uint64_t count = 1, bytes;
    for (unsigned d = 0; d < a->ndim; d++)
        if (mul_u64(count, a->shape[d], &count) != 0)
            return fail(NPY_ERR_OVERFLOW, msg, msg_size, "element count of the shape overflows");
    if (mul_u64(count, a->itemsize, &bytes) != 0 || bytes > (uint64_t)SIZE_MAX)
        return fail(NPY_ERR_OVERFLOW, msg, msg_size, "byte count of the shape overflows");
    uint64_t stride = 1;
    for (unsigned i = 0; i < a->ndim; i++) {
        unsigned d = a->fortran_order ? i : a->ndim - 1 - i;
        a->strides[d] = stride;
        if (mul_u64(stride, a->shape[d], &stride) != 0)
            return fail(NPY_ERR_OVERFLOW, msg, msg_size, "strides of the shape overflow");
    }
    a->count = count;
    a->nbytes = (size_t)bytes;
    return NPY_OK;
}

/* Reads the preamble; on success *header_len and *offset (where the header starts). */
static npy_status read_preamble(int fd, uint64_t file_size, uint32_t *header_len, size_t *offset,
                                char *msg, size_t msg_size)
{
    unsigned char pre[12];
    size_t want = file_size < sizeof pre ? (size_t)file_size : sizeof pre;
    ssize_t got = read_full(fd, pre, want);
    if (got < 0)
        return fail(NPY_ERR_IO, msg, msg_size, "read failed: %s", strerror(errno));
    size_t n = (size_t)got;
    size_t magic_cmp = n < NPY_MAGIC_LEN ? n : NPY_MAGIC_LEN;
    if (memcmp(pre, NPY_MAGIC, magic_cmp) != 0)
        return fail(NPY_ERR_BAD_MAGIC, msg, msg_size, "not a .npy file (wrong magic string)");
    if (n < 10)
        return fail(NPY_ERR_TRUNCATED_HEADER, msg, msg_size,
                    "file too short (%zu bytes) for a .npy preamble", n);
    if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0)
        return fail(NPY_ERR_BAD_VERSION, msg, msg_size,
                    "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are)", pre[6], pre[7]);
    if (pre[6] == 1) {
        *header_len = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
        *offset = 10;
    } else {
        if (n < 12)
            return fail(NPY_ERR_TRUNCATED_HEADER, msg, msg_size,
                        "file too short (%zu bytes) for a version %u.0 preamble", n, pre[6]);
        *header_len = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
                      (uint32_t)pre[11] << 24;
        *offset = 12;
    }
    if (*header_len > NPY_MAX_HEADER_LEN)
        return fail(NPY_ERR_HEADER_TOO_LARGE, msg, msg_size,
                    "header length %lu exceeds the limit of %u bytes", (unsigned long)*header_len,
                    NPY_MAX_HEADER_LEN);
    if ((uint64_t)*offset + *header_len > file_size)
        return fail(NPY_ERR_TRUNCATED_HEADER, msg, msg_size,
                    "header length %lu runs past the end of the file (%llu bytes)",
                    (unsigned long)*header_len, (unsigned long long)file_size);
    /* the version 1.0 preamble is only 10 bytes: go back to where the header starts */
    if (lseek(fd, (off_t)*offset, SEEK_SET) < 0)
        return fail(NPY_ERR_IO, msg, msg_size, "seek failed: %s", strerror(errno));
    return NPY_OK;
}

/* Reads and parses the header dictionary into a. */
static npy_status read_header(int fd, uint32_t header_len, npy_array *a, char *msg, size_t msg_size)
{
    char *text = malloc((size_t)header_len + 1);
    if (text == NULL)
        return fail(NPY_ERR_NO_MEMORY, msg, msg_size, "out of memory for a %lu-byte header",
                    (unsigned long)header_len);
    npy_status st = NPY_OK;
    header_fields h;
    ssize_t got = read_full(fd, text, header_len);
    if (got < 0)
        st = fail(NPY_ERR_IO, msg, msg_size, "read failed: %s", strerror(errno));
    else if ((size_t)got < header_len)
        st = fail(NPY_ERR_TRUNCATED_HEADER, msg, msg_size, "header truncated");
    else
        st = parse_header(text, header_len, &h, msg, msg_size);
    if (st == NPY_OK) {
        a->data_type = h.dtype->type;
        a->itemsize = h.dtype->size;
        memcpy(a->descr, h.descr, sizeof a->descr);
        a->fortran_order = h.fortran_order;
        a->ndim = h.ndim;
        memcpy(a->shape, h.shape, sizeof a->shape);
    }
    free(text);
    return st;
}

/* Checks the data size against the bytes left, then reads it. */
static npy_status read_data(int fd, uint64_t available, npy_array *a, char *msg, size_t msg_size)
{
    if ((uint64_t)a->nbytes > available)
        return fail(NPY_ERR_TRUNCATED_DATA, msg, msg_size,
                    "data truncated: shape needs %zu bytes, file has %llu", a->nbytes,
                    (unsigned long long)available);
    if ((uint64_t)a->nbytes < available)
        return fail(NPY_ERR_TRAILING_DATA, msg, msg_size,
                    "%llu extra bytes after the %zu bytes of data the shape needs",
                    (unsigned long long)(available - a->nbytes), a->nbytes);
    a->data = malloc(a->nbytes > 0 ? a->nbytes : 1);
    if (a->data == NULL)
        return fail(NPY_ERR_NO_MEMORY, msg, msg_size, "out of memory for %zu bytes of data",
                    a->nbytes);
    ssize_t got = read_full(fd, a->data, a->nbytes);
    if (got < 0)
        return fail(NPY_ERR_IO, msg, msg_size, "read failed: %s", strerror(errno));
    if ((size_t)got < a->nbytes)
        return fail(NPY_ERR_TRUNCATED_DATA, msg, msg_size, "data truncated while reading");
    return NPY_OK;
}

npy_status npy_read(const char *path, clops_data_type type_override, npy_array *out, char *msg,
                    size_t msg_size)
{
    if (msg != NULL && msg_size > 0)
        msg[0] = '\0';
    if (out == NULL)
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "no output array given");
    memset(out, 0, sizeof *out);
    if (path == NULL)
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "no path given");

    npy_status st = NPY_OK;
    struct stat sb;
    uint32_t header_len = 0;
    size_t offset = 0;
    /* O_NONBLOCK: opening a FIFO must not hang; it is then rejected as not a regular file */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return fail(NPY_ERR_IO, msg, msg_size, "cannot open: %s", strerror(errno));
    if (fstat(fd, &sb) != 0)
        st = fail(NPY_ERR_IO, msg, msg_size, "cannot stat: %s", strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = fail(NPY_ERR_NOT_REGULAR_FILE, msg, msg_size, "not a regular file");
    if (st == NPY_OK)
        st = read_preamble(fd, (uint64_t)sb.st_size, &header_len, &offset, msg, msg_size);
    if (st == NPY_OK)
        st = read_header(fd, header_len, out, msg, msg_size);
    if (st == NPY_OK)
        st = apply_override(out, type_override, msg, msg_size);
    if (st == NPY_OK)
        st = compute_layout(out, msg, msg_size);
    if (st == NPY_OK)
        st = read_data(fd, (uint64_t)sb.st_size - offset - header_len, out, msg, msg_size);
    close(fd);
    if (st != NPY_OK)
        npy_free(out);
    return st;
}

void npy_free(npy_array *array)
{
    if (array == NULL)
        return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

/* ---- writing -------------------------------------------------------------------------------- */

/* Appends formatted text to buf at *len; -1 if it does not fit. */
static int append(char *buf, size_t size, size_t *len, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len >= size)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - *len)
        return -1;
    *len += (size_t)n;
    return 0;
}

npy_status npy_format_header(clops_data_type type, unsigned ndim, const uint64_t *shape, char *buf,
                             size_t buf_size, size_t *len)
{
    const char *descr = npy_descr(type);
    if (descr == NULL || ndim > NPY_MAX_DIMS || (ndim > 0 && shape == NULL) || buf == NULL ||
        len == NULL || buf_size < 10)
        return NPY_ERR_ARGUMENT;
    /* the dictionary as numpy's repr() writes it, after the 10-byte preamble */
    size_t n = 10;
    int bad = append(buf, buf_size, &n, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (unsigned d = 0; d < ndim && !bad; d++)
        bad = append(buf, buf_size, &n, d == 0 ? "%llu" : ", %llu", (unsigned long long)shape[d]);
    if (!bad)
        bad = append(buf, buf_size, &n, ndim == 1 ? ",), }" : "), }");
    if (!bad && ndim > 0) { /* numpy's spare room to grow the first axis in place */
        char digits[24];
        int dl = snprintf(digits, sizeof digits, "%llu", (unsigned long long)shape[0]);
        bad = append(buf, buf_size, &n, "%*s", NPY_GROWTH_AXIS_MAX_DIGITS - dl, "");
    }
    /* blanks and a newline so the data starts at a multiple of 64 (1..64 blanks, as numpy) */
    size_t pad = NPY_ALIGN - ((n + 1) % NPY_ALIGN);
    if (bad || n + pad + 1 > buf_size || n + pad + 1 - 10 > 0xffffu)
        return NPY_ERR_ARGUMENT;
    memset(buf + n, ' ', pad);
    n += pad;
    buf[n++] = '\n';
    memcpy(buf, NPY_MAGIC "\x01\x00", 8);
    buf[8] = (char)((n - 10) & 0xff);
    buf[9] = (char)((n - 10) >> 8);
    *len = n;
    return NPY_OK;
}

static npy_status check_write_args(clops_data_type type, unsigned ndim, const uint64_t *shape,
                                   const void *data, size_t nbytes, char *msg, size_t msg_size)
{
    if (npy_descr(type) == NULL)
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "data type %d has no .npy dtype", (int)type);
    if (ndim > NPY_MAX_DIMS || (ndim > 0 && shape == NULL))
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "invalid shape (%u dimensions)", ndim);
    uint64_t count = 1, bytes;
    for (unsigned d = 0; d < ndim; d++)
        if (mul_u64(count, shape[d], &count) != 0)
            return fail(NPY_ERR_OVERFLOW, msg, msg_size, "element count of the shape overflows");
    if (mul_u64(count, type_size(type), &bytes) != 0)
        return fail(NPY_ERR_OVERFLOW, msg, msg_size, "byte count of the shape overflows");
    if (bytes != (uint64_t)nbytes)
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "%zu bytes given, the shape needs %llu", nbytes,
                    (unsigned long long)bytes);
    if (data == NULL && nbytes > 0)
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "no data given");
    return NPY_OK;
}

npy_status npy_write_atomic(const char *path, clops_data_type type, unsigned ndim,
                            const uint64_t *shape, const void *data, size_t nbytes, char *msg,
                            size_t msg_size)
{
    if (msg != NULL && msg_size > 0)
        msg[0] = '\0';
    if (path == NULL || path[0] == '\0')
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "no path given");
    npy_status st = check_write_args(type, ndim, shape, data, nbytes, msg, msg_size);
    if (st != NPY_OK)
        return st;
    char header[1024];
    size_t header_len = 0;
    if (npy_format_header(type, ndim, shape, header, sizeof header, &header_len) != NPY_OK)
        return fail(NPY_ERR_ARGUMENT, msg, msg_size, "cannot format the header");

    const void *const parts[2] = {header, data};
    const size_t sizes[2] = {header_len, nbytes};
    clops_file_writer w;
    if (clops_file_write_parts(path, 0666, CLOPS_FILE_IN_PLACE, parts, sizes, 2, &w) != 0) {
        char why[CLOPS_FILE_PATH_MAX + 128];
        clops_file_describe(&w, why, sizeof why);
        st = fail(NPY_ERR_WRITE, msg, msg_size, "%s", why);
    }
    return st;
}
