/*
 * test_npy.c - the .npy reader and writer (tools/common/npy.c).
 *
 * Good files of every dtype, format versions 1.0, 2.0 and 3.0, Fortran order
 * (strides), odd but valid headers; the writer byte for byte against numpy's
 * layout (the committed fixtures were written the way numpy.save() writes) and
 * round trips; the atomic writer's failure paths; and every kind of broken file,
 * each asserting its specific status. Files are made in a fresh temporary
 * directory that is removed at the end.
 */
#define _XOPEN_SOURCE 700 /* nftw, for tc_rm_rf */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"
#include "suite.h"
#include "test_fs.h"

static char tmp_dir[256];

/* ---- file helpers ------------------------------------------------------------------ */

static void path_in_tmp(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmp_dir, name);
}

static void write_file(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* Reads a whole file into a malloc'ed buffer; *len receives its size. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static unsigned count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* Builds a .npy image: preamble of version major.0, the dictionary padded with blanks
 * and a newline to a multiple of 64, then data_len bytes of `data` (or a pattern). The
 * header length field is the true one plus len_delta, or len_abs when it is not 0. */
static size_t build_npy(unsigned char *buf, size_t cap, int major, const char *dict,
                        const void *data, size_t data_len, long len_delta, uint32_t len_abs)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t dlen = strlen(dict);
    size_t total = pre + dlen + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = dlen + pad + 1;
    ck_assert_uint_le(pre + hlen + data_len, cap);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    uint32_t field = len_abs != 0 ? len_abs : (uint32_t)((long)hlen + len_delta);
    buf[8] = (unsigned char)(field & 0xff);
    buf[9] = (unsigned char)((field >> 8) & 0xff);
    if (major != 1) {
        buf[10] = (unsigned char)((field >> 16) & 0xff);
        buf[11] = (unsigned char)(field >> 24);
    }
    memcpy(buf + pre, dict, dlen);
    memset(buf + pre + dlen, ' ', pad);
    buf[pre + dlen + pad] = '\n';
    for (size_t i = 0; i < data_len; i++)
        buf[pre + hlen + i] = data != NULL ? ((const unsigned char *)data)[i] : (unsigned char)(i * 7 + 1);
    return pre + hlen + data_len;
}

/* Writes an image built by build_npy to tmp_dir/name; the path goes to path. */
static void make_npy(char *path, size_t path_size, const char *name, int major, const char *dict,
                     const void *data, size_t data_len)
{
    static unsigned char buf[1 << 16];
    size_t n = build_npy(buf, sizeof buf, major, dict, data, data_len, 0, 0);
    path_in_tmp(path, path_size, name);
    write_file(path, buf, n);
}

static void assert_one_line(const char *msg)
{
    ck_assert_msg(msg[0] != '\0', "empty error message");
    ck_assert_msg(strchr(msg, '\n') == NULL, "message spans lines: %s", msg);
}

/* ---- good files: every dtype ---------------------------------------------------------- */

typedef struct dtype_case {
    const char *descr;
    clops_data_type type;
    size_t size;
} dtype_case;

static const dtype_case dtype_cases[] = {
    {"|b1", CLOPS_DATA_TYPE_BOOL, 1},      {"<b1", CLOPS_DATA_TYPE_BOOL, 1},
    {"|i1", CLOPS_DATA_TYPE_INT8, 1},      {"<i1", CLOPS_DATA_TYPE_INT8, 1},
    {"|u1", CLOPS_DATA_TYPE_UINT8, 1},     {"<u1", CLOPS_DATA_TYPE_UINT8, 1},
    {">u1", CLOPS_DATA_TYPE_UINT8, 1},     {"<i2", CLOPS_DATA_TYPE_INT16, 2},
    {"<u2", CLOPS_DATA_TYPE_UINT16, 2},    {"<f2", CLOPS_DATA_TYPE_FLOAT16, 2},
    {"<i4", CLOPS_DATA_TYPE_INT32, 4},     {"<u4", CLOPS_DATA_TYPE_UINT32, 4},
    {"<f4", CLOPS_DATA_TYPE_FLOAT32, 4},   {"<i8", CLOPS_DATA_TYPE_INT64, 8},
    {"<u8", CLOPS_DATA_TYPE_UINT64, 8},    {"<f8", CLOPS_DATA_TYPE_FLOAT64, 8},
    {"<c8", CLOPS_DATA_TYPE_COMPLEX64, 8}, {"<c16", CLOPS_DATA_TYPE_COMPLEX128, 16},
    {"=f4", CLOPS_DATA_TYPE_FLOAT32, 4},
};
#define DTYPE_CASES (int)(sizeof(dtype_cases) / sizeof(dtype_cases[0]))

START_TEST(test_read_every_dtype)
{
    const dtype_case *c = &dtype_cases[_i];
    for (int major = 1; major <= 3; major++) {
        char dict[128], path[512], msg[NPY_MESSAGE_SIZE];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }",
                 c->descr);
        unsigned char data[6 * 16];
        for (size_t i = 0; i < sizeof data; i++)
            data[i] = (unsigned char)(i * 13 + 5);
        make_npy(path, sizeof path, "dtype.npy", major, dict, data, 6 * c->size);
        npy_array a;
        npy_status st = npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg);
        ck_assert_msg(st == NPY_OK, "%s v%d.0: %s (%s)", c->descr, major, npy_status_name(st), msg);
        ck_assert_int_eq(a.data_type, c->type);
        ck_assert_uint_eq(a.itemsize, c->size);
        ck_assert_str_eq(a.descr, c->descr);
        ck_assert_uint_eq(a.ndim, 2);
        ck_assert_uint_eq(a.shape[0], 2);
        ck_assert_uint_eq(a.shape[1], 3);
        ck_assert_uint_eq(a.strides[0], 3);
        ck_assert_uint_eq(a.strides[1], 1);
        ck_assert_int_eq(a.fortran_order, 0);
        ck_assert_uint_eq(a.count, 6);
        ck_assert_uint_eq(a.nbytes, 6 * c->size);
        ck_assert_mem_eq(a.data, data, 6 * c->size);
        npy_free(&a);
        ck_assert_ptr_null(a.data);
    }
}
END_TEST

/* ---- good files: layouts and header spellings ------------------------------------------ */

START_TEST(test_fortran_order_strides)
{
    char path[512], msg[NPY_MESSAGE_SIZE];
    make_npy(path, sizeof path, "f.npy", 1,
             "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4, 5), }", NULL, 120 * 4);
    npy_array a;
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_OK);
    ck_assert_int_eq(a.fortran_order, 1);
    ck_assert_uint_eq(a.ndim, 4);
    ck_assert_uint_eq(a.strides[0], 1);
    ck_assert_uint_eq(a.strides[1], 2);
    ck_assert_uint_eq(a.strides[2], 6);
    ck_assert_uint_eq(a.strides[3], 24);
    npy_free(&a);

    make_npy(path, sizeof path, "c.npy", 1,
             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 5), }", NULL, 120 * 4);
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_OK);
    ck_assert_int_eq(a.fortran_order, 0);
    ck_assert_uint_eq(a.strides[0], 60);
    ck_assert_uint_eq(a.strides[1], 20);
    ck_assert_uint_eq(a.strides[2], 5);
    ck_assert_uint_eq(a.strides[3], 1);
    npy_free(&a);
}
END_TEST

/* The committed Fortran-order fixture holds the same logical tensor as the C-order one. */
START_TEST(test_fortran_fixture_matches_c_order)
{
    const char *dir = getenv("CLOPS_TEST_DATA");
    ck_assert_msg(dir != NULL, "CLOPS_TEST_DATA is not set");
    char pc[512], pf[512], msg[NPY_MESSAGE_SIZE];
    snprintf(pc, sizeof pc, "%s/dml_input_u32.npy", dir);
    snprintf(pf, sizeof pf, "%s/dml_input_u32_fortran.npy", dir);
    npy_array c, f;
    ck_assert_msg(npy_read(pc, CLOPS_DATA_TYPE_UNKNOWN, &c, msg, sizeof msg) == NPY_OK, "%s", msg);
    ck_assert_msg(npy_read(pf, CLOPS_DATA_TYPE_UNKNOWN, &f, msg, sizeof msg) == NPY_OK, "%s", msg);
    ck_assert_int_eq(f.fortran_order, 1);
    ck_assert_uint_eq(f.ndim, 4);
    const uint32_t *cv = c.data, *fv = f.data;
    for (uint64_t n = 0; n < 1; n++)
        for (uint64_t ch = 0; ch < 8; ch++)
            for (uint64_t h = 0; h < 2; h++)
                for (uint64_t w = 0; w < 3; w++) {
                    uint64_t ci = n * c.strides[0] + ch * c.strides[1] + h * c.strides[2] + w * c.strides[3];
                    uint64_t fi = n * f.strides[0] + ch * f.strides[1] + h * f.strides[2] + w * f.strides[3];
                    ck_assert_uint_eq(cv[ci], fv[fi]);
                }
    ck_assert_uint_eq(cv[6], 9); /* [0, 1, 0, 0] of the DirectML example */
    npy_free(&c);
    npy_free(&f);
}
END_TEST

typedef struct shape_case {
    const char *dict;
    unsigned ndim;
    uint64_t shape0;
    uint64_t count;
} shape_case;

static const shape_case shape_cases[] = {
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (), }", 0, 0, 1},
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (5,), }", 1, 5, 5},
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (0, 3), }", 2, 0, 0},
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (1, 0, 2, 2), }", 4, 1, 0},
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3,), }", 2, 2, 6},
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (2L, 3L), }", 2, 2, 6},
    {"{\"descr\": \"<u2\", \"fortran_order\": False, \"shape\": (2, 3)}", 2, 2, 6},
    {"{'shape': (4, 1), 'descr': '<u2', 'fortran_order': True}", 2, 4, 4},
    {"{ 'descr' : '<u2' , 'fortran_order' : False , 'shape' : ( 7 , ) , }", 1, 7, 7},
    {"{'descr': '<u2', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
     "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3), }",
     32, 1, 3},
};
#define SHAPE_CASES (int)(sizeof(shape_cases) / sizeof(shape_cases[0]))

START_TEST(test_valid_header_spellings)
{
    const shape_case *c = &shape_cases[_i];
    char path[512], msg[NPY_MESSAGE_SIZE];
    make_npy(path, sizeof path, "shape.npy", 1, c->dict, NULL, c->count * 2);
    npy_array a;
    npy_status st = npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg);
    ck_assert_msg(st == NPY_OK, "%s: %s (%s)", c->dict, npy_status_name(st), msg);
    ck_assert_uint_eq(a.ndim, c->ndim);
    if (c->ndim > 0)
        ck_assert_uint_eq(a.shape[0], c->shape0);
    ck_assert_uint_eq(a.count, c->count);
    ck_assert_uint_eq(a.nbytes, c->count * 2);
    ck_assert_ptr_nonnull(a.data);
    npy_free(&a);
}
END_TEST

START_TEST(test_bfloat16_override)
{
    const char *ok[] = {"<u2", "<i2", "<f2"};
    char dict[128], path[512], msg[NPY_MESSAGE_SIZE];
    npy_array a;
    for (int i = 0; i < 3; i++) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (4,), }", ok[i]);
        make_npy(path, sizeof path, "bf.npy", 1, dict, NULL, 8);
        ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_BFLOAT16, &a, msg, sizeof msg), NPY_OK);
        ck_assert_int_eq(a.data_type, CLOPS_DATA_TYPE_BFLOAT16);
        ck_assert_uint_eq(a.itemsize, 2);
        npy_free(&a);
    }
    make_npy(path, sizeof path, "bf.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
             NULL, 16);
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_BFLOAT16, &a, msg, sizeof msg), NPY_ERR_TYPE_OVERRIDE);
    assert_one_line(msg);
    ck_assert_ptr_null(a.data);
    make_npy(path, sizeof path, "bf.npy", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }",
             NULL, 8);
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_FLOAT32, &a, msg, sizeof msg), NPY_ERR_TYPE_OVERRIDE);
}
END_TEST

/* ---- broken files ------------------------------------------------------------------------ */

typedef struct bad_case {
    const char *name;
    const char *raw; /* verbatim bytes (raw_len of them) instead of a built image */
    size_t raw_len;
    int major;
    const char *dict;
    size_t data_len;
    long len_delta;   /* added to the true header length field */
    uint32_t len_abs; /* header length field, when not 0 */
    clops_data_type override;
    npy_status want;
} bad_case;

#define DICT(descr, fortran, shape) "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"
#define GOOD_DICT DICT("<f4", "False", "(2, 3)")
#define RAW(s) s, sizeof(s) - 1, 0, NULL, 0, 0, 0
#define NPY(major, dict, data_len) NULL, 0, major, dict, data_len, 0, 0

static const bad_case bad_cases[] = {
    /* magic and version */
    {"empty file", RAW(""), 0, NPY_ERR_TRUNCATED_HEADER},
    {"wrong magic", RAW("\x93NUMPZ\x01\x00\x10\x00{}              "), 0, NPY_ERR_BAD_MAGIC},
    {"zip (npz) file", RAW("PK\x03\x04\x14\x00\x00\x00\x08\x00"), 0, NPY_ERR_BAD_MAGIC},
    {"text file", RAW("hello, world\n"), 0, NPY_ERR_BAD_MAGIC},
    {"three bytes", RAW("abc"), 0, NPY_ERR_BAD_MAGIC},
    {"magic only", RAW("\x93NUMPY"), 0, NPY_ERR_TRUNCATED_HEADER},
    {"no header length", RAW("\x93NUMPY\x01\x00\x76"), 0, NPY_ERR_TRUNCATED_HEADER},
    {"v2 header length cut", RAW("\x93NUMPY\x02\x00\x76\x00\x00"), 0, NPY_ERR_TRUNCATED_HEADER},
    {"version 4.0", RAW("\x93NUMPY\x04\x00\x10\x00{}              "), 0, NPY_ERR_BAD_VERSION},
    {"version 1.1", RAW("\x93NUMPY\x01\x01\x10\x00{}              "), 0, NPY_ERR_BAD_VERSION},
    {"version 0.0", RAW("\x93NUMPY\x00\x00\x10\x00{}              "), 0, NPY_ERR_BAD_VERSION},
    /* header length lies */
    {"header runs past the file", NULL, 0, 1, GOOD_DICT, 0, 0, 5000, 0, NPY_ERR_TRUNCATED_HEADER},
    {"header runs past the data", NULL, 0, 1, GOOD_DICT, 24, 25, 0, 0, NPY_ERR_TRUNCATED_HEADER},
    {"v2 huge header length", NULL, 0, 2, GOOD_DICT, 24, 0, 0xfffffff0u, 0, NPY_ERR_HEADER_TOO_LARGE},
    {"v3 header over the limit", NULL, 0, 3, GOOD_DICT, 24, 0, NPY_MAX_HEADER_LEN + 1, 0,
     NPY_ERR_HEADER_TOO_LARGE},
    {"header length cuts the dict", NULL, 0, 1, GOOD_DICT, 24, -100, 0, 0, NPY_ERR_MALFORMED_HEADER},
    {"header length short by padding", NULL, 0, 1, GOOD_DICT, 24, -8, 0, 0, NPY_ERR_TRAILING_DATA},
    /* data size against the shape */
    {"data truncated", NPY(1, GOOD_DICT, 23), 0, NPY_ERR_TRUNCATED_DATA},
    {"no data at all", NPY(1, GOOD_DICT, 0), 0, NPY_ERR_TRUNCATED_DATA},
    {"trailing byte", NPY(1, GOOD_DICT, 25), 0, NPY_ERR_TRAILING_DATA},
    {"trailing element", NPY(2, GOOD_DICT, 28), 0, NPY_ERR_TRAILING_DATA},
    {"data for an empty shape", NPY(1, DICT("<f4", "False", "(0, 3)"), 4), 0, NPY_ERR_TRAILING_DATA},
    /* malformed dictionaries */
    {"not a dict", NPY(1, "[1, 2, 3]", 0), 0, NPY_ERR_MALFORMED_HEADER},
    {"no closing brace", NPY(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", 24), 0,
     NPY_ERR_MALFORMED_HEADER},
    {"missing shape", NPY(1, "{'descr': '<f4', 'fortran_order': False}", 4), 0, NPY_ERR_MALFORMED_HEADER},
    {"missing descr", NPY(1, "{'fortran_order': False, 'shape': (1,)}", 4), 0, NPY_ERR_MALFORMED_HEADER},
    {"missing fortran_order", NPY(1, "{'descr': '<f4', 'shape': (1,)}", 4), 0, NPY_ERR_MALFORMED_HEADER},
    {"unknown key", NPY(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4), 0,
     NPY_ERR_MALFORMED_HEADER},
    {"duplicate key", NPY(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4),
     0, NPY_ERR_MALFORMED_HEADER},
    {"unterminated string", NPY(1, "{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}", 4), 0,
     NPY_ERR_MALFORMED_HEADER},
    {"unquoted key", NPY(1, "{descr: '<f4', 'fortran_order': False, 'shape': (1,)}", 4), 0,
     NPY_ERR_MALFORMED_HEADER},
    {"missing colon", NPY(1, "{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", 4), 0,
     NPY_ERR_MALFORMED_HEADER},
    {"missing comma", NPY(1, "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", 4), 0,
     NPY_ERR_MALFORMED_HEADER},
    {"fortran_order not a bool", NPY(1, DICT("<f4", "1", "(1,)"), 4), 0, NPY_ERR_MALFORMED_HEADER},
    {"fortran_order Truely", NPY(1, DICT("<f4", "Truely", "(1,)"), 4), 0, NPY_ERR_MALFORMED_HEADER},
    {"text after the dict", NPY(1, GOOD_DICT " x", 24), 0, NPY_ERR_MALFORMED_HEADER},
    {"escape in a string", NPY(1, DICT("<f\\x34", "False", "(1,)"), 4), 0, NPY_ERR_MALFORMED_HEADER},
    {"NUL in the header", RAW("\x93NUMPY\x01\x00\x06\x00{}\0  \n"), 0, NPY_ERR_MALFORMED_HEADER},
    /* dtypes */
    {"unknown dtype <f3", NPY(1, DICT("<f3", "False", "(1,)"), 3), 0, NPY_ERR_UNKNOWN_DTYPE},
    {"unicode dtype", NPY(1, DICT("<U10", "False", "(1,)"), 40), 0, NPY_ERR_UNKNOWN_DTYPE},
    {"datetime dtype", NPY(1, DICT("<M8[ns]", "False", "(1,)"), 8), 0, NPY_ERR_UNKNOWN_DTYPE},
    {"float128", NPY(1, DICT("<f16", "False", "(1,)"), 16), 0, NPY_ERR_UNKNOWN_DTYPE},
    {"empty dtype", NPY(1, DICT("", "False", "(1,)"), 4), 0, NPY_ERR_UNKNOWN_DTYPE},
    {"structured dtype", NPY(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4), 0,
     NPY_ERR_UNKNOWN_DTYPE},
    {"object dtype", NPY(1, DICT("|O", "False", "(1,)"), 8), 0, NPY_ERR_OBJECT_DTYPE},
    {"object dtype <O", NPY(1, DICT("<O", "False", "(1,)"), 8), 0, NPY_ERR_OBJECT_DTYPE},
    {"big-endian >f4", NPY(1, DICT(">f4", "False", "(2, 3)"), 24), 0, NPY_ERR_BIG_ENDIAN},
    {"big-endian >i8", NPY(1, DICT(">i8", "False", "(1,)"), 8), 0, NPY_ERR_BIG_ENDIAN},
    {"big-endian >c16", NPY(1, DICT(">c16", "False", "(1,)"), 16), 0, NPY_ERR_BIG_ENDIAN},
    /* shapes */
    {"negative dim", NPY(1, DICT("<f4", "False", "(-1, 3)"), 12), 0, NPY_ERR_BAD_SHAPE},
    {"float dim", NPY(1, DICT("<f4", "False", "(2.5, 3)"), 24), 0, NPY_ERR_BAD_SHAPE},
    {"string dim", NPY(1, DICT("<f4", "False", "('a', 3)"), 24), 0, NPY_ERR_BAD_SHAPE},
    {"hex dim", NPY(1, DICT("<f4", "False", "(0x2, 3)"), 24), 0, NPY_ERR_BAD_SHAPE},
    {"int, not tuple", NPY(1, DICT("<f4", "False", "(3)"), 12), 0, NPY_ERR_BAD_SHAPE},
    {"list shape", NPY(1, DICT("<f4", "False", "[2, 3]"), 24), 0, NPY_ERR_BAD_SHAPE},
    {"empty element", NPY(1, DICT("<f4", "False", "(2, , 3)"), 24), 0, NPY_ERR_BAD_SHAPE},
    {"33 dims", NPY(1, DICT("<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
                                           "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)"),
                    4),
     0, NPY_ERR_BAD_SHAPE},
    /* overflow */
    {"element count overflows", NPY(1, DICT("<f4", "False", "(4294967296, 4294967296, 2)"), 8), 0,
     NPY_ERR_OVERFLOW},
    {"byte count overflows", NPY(1, DICT("<c16", "False", "(2305843009213693952,)"), 16), 0,
     NPY_ERR_OVERFLOW},
    {"dim over 2^63", NPY(1, DICT("<u1", "False", "(9223372036854775808,)"), 1), 0, NPY_ERR_OVERFLOW},
    {"dim over 2^64", NPY(1, DICT("<u1", "False", "(99999999999999999999999,)"), 1), 0, NPY_ERR_OVERFLOW},
    {"huge shape claims, tiny file", NPY(1, DICT("<f8", "False", "(1000000000, 1000000000)"), 8), 0,
     NPY_ERR_TRUNCATED_DATA},
    /* type override */
    {"bfloat16 override of <f4", NPY(1, GOOD_DICT, 24), CLOPS_DATA_TYPE_BFLOAT16, NPY_ERR_TYPE_OVERRIDE},
    {"bfloat16 override of |u1", NPY(1, DICT("|u1", "False", "(2,)"), 2), CLOPS_DATA_TYPE_BFLOAT16,
     NPY_ERR_TYPE_OVERRIDE},
};
#define BAD_CASES (int)(sizeof(bad_cases) / sizeof(bad_cases[0]))

START_TEST(test_broken_file)
{
    const bad_case *c = &bad_cases[_i];
    static unsigned char buf[1 << 16];
    char path[512], msg[NPY_MESSAGE_SIZE];
    size_t n;
    if (c->raw != NULL) {
        memcpy(buf, c->raw, c->raw_len);
        n = c->raw_len;
    } else {
        n = build_npy(buf, sizeof buf, c->major, c->dict, NULL, c->data_len, c->len_delta, c->len_abs);
    }
    path_in_tmp(path, sizeof path, "broken.npy");
    write_file(path, buf, n);
    npy_array a;
    memset(&a, 0x5a, sizeof a);
    npy_status st = npy_read(path, c->override, &a, msg, sizeof msg);
    ck_assert_msg(st == c->want, "%s: got %s (%s), want %s", c->name, npy_status_name(st), msg,
                  npy_status_name(c->want));
    assert_one_line(msg);
    ck_assert_ptr_null(a.data);
    ck_assert_uint_eq(a.nbytes, 0);
    npy_free(&a);
}
END_TEST

START_TEST(test_unreadable_paths)
{
    char msg[NPY_MESSAGE_SIZE], path[512];
    npy_array a;
    path_in_tmp(path, sizeof path, "does-not-exist.npy");
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_ERR_IO);
    assert_one_line(msg);
    ck_assert_int_eq(npy_read(tmp_dir, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg),
                     NPY_ERR_NOT_REGULAR_FILE);
    assert_one_line(msg);
    ck_assert_int_eq(npy_read(NULL, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_ERR_ARGUMENT);
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, NULL, NULL, 0), NPY_ERR_ARGUMENT);
    /* no message buffer at all is fine */
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, NULL, 0), NPY_ERR_IO);
}
END_TEST

START_TEST(test_status_names)
{
    ck_assert_str_eq(npy_status_name(NPY_OK), "NPY_OK");
    ck_assert_str_eq(npy_status_name(NPY_ERR_BIG_ENDIAN), "NPY_ERR_BIG_ENDIAN");
    ck_assert_str_eq(npy_status_name((npy_status)999), "NPY_UNKNOWN_STATUS");
    ck_assert_str_eq(npy_status_message(NPY_OK), "success");
    for (int s = 0; s < NPY_STATUS_COUNT; s++) {
        ck_assert_ptr_nonnull(npy_status_message((npy_status)s));
        ck_assert_int_eq(strncmp(npy_status_name((npy_status)s), "NPY_", 4), 0);
    }
}
END_TEST

/* ---- writer ------------------------------------------------------------------------------ */

static const clops_data_type all_types[] = {
    CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16,  CLOPS_DATA_TYPE_UINT32,    CLOPS_DATA_TYPE_UINT16,
    CLOPS_DATA_TYPE_UINT8,   CLOPS_DATA_TYPE_INT32,    CLOPS_DATA_TYPE_INT16,     CLOPS_DATA_TYPE_INT8,
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_UINT64,   CLOPS_DATA_TYPE_INT64,     CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128,
};
#define ALL_TYPES (int)(sizeof(all_types) / sizeof(all_types[0]))

START_TEST(test_writer_round_trip)
{
    clops_data_type type = all_types[_i];
    size_t esize = clops_data_type_size(type);
    uint64_t shape[4] = {1, 2, 3, 4};
    size_t nbytes = 24 * esize;
    unsigned char data[24 * 16];
    for (size_t i = 0; i < nbytes; i++)
        data[i] = (unsigned char)(i * 31 + 7);
    char path[512], msg[NPY_MESSAGE_SIZE];
    path_in_tmp(path, sizeof path, "round.npy");
    npy_status st = npy_write_atomic(path, type, 4, shape, data, nbytes, msg, sizeof msg);
    ck_assert_msg(st == NPY_OK, "%s: %s", clops_data_type_name(type), msg);

    size_t len;
    unsigned char *file = slurp(path, &len);
    ck_assert_uint_eq(len, 128 + nbytes); /* header padded to 128 bytes */
    ck_assert_int_eq(file[127], '\n');
    ck_assert_mem_eq(file + 128, data, nbytes);
    free(file);

    npy_array a;
    clops_data_type override = type == CLOPS_DATA_TYPE_BFLOAT16 ? type : CLOPS_DATA_TYPE_UNKNOWN;
    ck_assert_int_eq(npy_read(path, override, &a, msg, sizeof msg), NPY_OK);
    ck_assert_int_eq(a.data_type, type);
    ck_assert_str_eq(a.descr, npy_descr(type));
    ck_assert_uint_eq(a.ndim, 4);
    for (int d = 0; d < 4; d++)
        ck_assert_uint_eq(a.shape[d], shape[d]);
    ck_assert_int_eq(a.fortran_order, 0);
    ck_assert_mem_eq(a.data, data, nbytes);
    npy_free(&a);
    if (type == CLOPS_DATA_TYPE_BFLOAT16) { /* written as '<u2' */
        ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_OK);
        ck_assert_int_eq(a.data_type, CLOPS_DATA_TYPE_UINT16);
        npy_free(&a);
    }
}
END_TEST

/* The writer's bytes equal numpy.save()'s: the fixture was written in numpy's exact layout. */
START_TEST(test_writer_matches_numpy_bytes)
{
    const char *dir = getenv("CLOPS_TEST_DATA");
    ck_assert_msg(dir != NULL, "CLOPS_TEST_DATA is not set");
    const char *fixtures[] = {"dml_input_u32.npy", "onnx_d2s_crd_f32.npy", "unpool_indices_i64.npy"};
    for (int i = 0; i < 3; i++) {
        char fixture[512], path[512], msg[NPY_MESSAGE_SIZE];
        snprintf(fixture, sizeof fixture, "%s/%s", dir, fixtures[i]);
        npy_array a;
        ck_assert_msg(npy_read(fixture, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg) == NPY_OK, "%s", msg);
        path_in_tmp(path, sizeof path, "copy.npy");
        ck_assert_int_eq(npy_write_atomic(path, a.data_type, a.ndim, a.shape, a.data, a.nbytes, msg, sizeof msg),
                         NPY_OK);
        size_t la, lb;
        unsigned char *fa = slurp(fixture, &la), *fb = slurp(path, &lb);
        ck_assert_uint_eq(la, lb);
        ck_assert_mem_eq(fa, fb, la);
        free(fa);
        free(fb);
        npy_free(&a);
    }
    /* numpy's exact header for shape (1, 8, 2, 3) '<u4' */
    static const char want[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<u4', 'fortran_order': False, "
                               "'shape': (1, 8, 2, 3), }";
    char hdr[1024];
    size_t len = 0;
    uint64_t shape[4] = {1, 8, 2, 3};
    ck_assert_int_eq(npy_format_header(CLOPS_DATA_TYPE_UINT32, 4, shape, hdr, sizeof hdr, &len), NPY_OK);
    ck_assert_uint_eq(len, 128);
    ck_assert_mem_eq(hdr, want, sizeof want - 1);
}
END_TEST

/* Every dimension count from 0 to 32 aligns the data to 64 bytes and reads back. */
START_TEST(test_writer_alignment)
{
    uint64_t shape[NPY_MAX_DIMS];
    for (unsigned ndim = 0; ndim <= NPY_MAX_DIMS; ndim++) {
        for (unsigned d = 0; d < ndim; d++)
            shape[d] = d == 0 ? 12345678901ull : 1;
        if (ndim > 0)
            shape[ndim - 1] = ndim == 1 ? 3 : 2;
        char hdr[2048];
        size_t len = 0;
        ck_assert_int_eq(npy_format_header(CLOPS_DATA_TYPE_UINT8, ndim, shape, hdr, sizeof hdr, &len), NPY_OK);
        ck_assert_uint_eq(len % 64, 0);
        ck_assert_int_eq(hdr[len - 1], '\n');
        ck_assert_uint_eq((unsigned char)hdr[8] | (unsigned)(unsigned char)hdr[9] << 8, len - 10);

        uint64_t small[NPY_MAX_DIMS];
        for (unsigned d = 0; d < ndim; d++)
            small[d] = d + 1 == ndim ? 3 : 1;
        char path[512], msg[NPY_MESSAGE_SIZE];
        unsigned char data[3] = {1, 2, 3};
        path_in_tmp(path, sizeof path, "align.npy");
        size_t nbytes = ndim == 0 ? 1 : 3;
        ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_UINT8, ndim, small, data, nbytes, msg, sizeof msg),
                         NPY_OK);
        npy_array a;
        ck_assert_msg(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg) == NPY_OK, "ndim %u: %s", ndim,
                      msg);
        ck_assert_uint_eq(a.ndim, ndim);
        ck_assert_uint_eq(a.nbytes, nbytes);
        npy_free(&a);
    }
    char small_buf[64];
    size_t len;
    ck_assert_int_eq(npy_format_header(CLOPS_DATA_TYPE_UINT8, 1, shape, small_buf, sizeof small_buf, &len),
                     NPY_ERR_ARGUMENT);
    ck_assert_int_eq(npy_format_header(CLOPS_DATA_TYPE_UNKNOWN, 1, shape, small_buf, sizeof small_buf, &len),
                     NPY_ERR_ARGUMENT);
}
END_TEST

START_TEST(test_writer_empty_tensor)
{
    char path[512], msg[NPY_MESSAGE_SIZE];
    uint64_t shape[4] = {1, 0, 4, 4};
    path_in_tmp(path, sizeof path, "empty.npy");
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 4, shape, NULL, 0, msg, sizeof msg), NPY_OK);
    npy_array a;
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_OK);
    ck_assert_uint_eq(a.count, 0);
    ck_assert_uint_eq(a.shape[1], 0);
    npy_free(&a);
}
END_TEST

/* Failures leave neither the target nor a temporary file behind; success replaces. */
START_TEST(test_writer_atomic_failures)
{
    char path[512], msg[NPY_MESSAGE_SIZE], dirpath[512];
    uint64_t shape[1] = {4};
    float data[4] = {1, 2, 3, 4};
    unsigned before = count_dir_entries(tmp_dir);

    /* a directory that does not exist */
    path_in_tmp(path, sizeof path, "no-such-dir/out.npy");
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 1, shape, data, sizeof data, msg, sizeof msg),
                     NPY_ERR_WRITE);
    assert_one_line(msg);
    ck_assert(!file_exists(path));

    /* the target is a non-empty directory: rename fails after the data was written */
    path_in_tmp(dirpath, sizeof dirpath, "a-directory");
    ck_assert_int_eq(mkdir(dirpath, 0755), 0);
    char inner[600];
    snprintf(inner, sizeof inner, "%s/keep", dirpath);
    write_file(inner, "x", 1);
    ck_assert_int_eq(
        npy_write_atomic(dirpath, CLOPS_DATA_TYPE_FLOAT32, 1, shape, data, sizeof data, msg, sizeof msg),
        NPY_ERR_WRITE);
    assert_one_line(msg);
    ck_assert_uint_eq(count_dir_entries(tmp_dir), before + 1); /* only the directory itself */
    unlink(inner);
    rmdir(dirpath);

    /* bad arguments create nothing */
    path_in_tmp(path, sizeof path, "args.npy");
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 1, shape, data, 15, msg, sizeof msg),
                     NPY_ERR_ARGUMENT);
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_UNKNOWN, 1, shape, data, 16, msg, sizeof msg),
                     NPY_ERR_ARGUMENT);
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 33, shape, data, 16, msg, sizeof msg),
                     NPY_ERR_ARGUMENT);
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 1, shape, NULL, 16, msg, sizeof msg),
                     NPY_ERR_ARGUMENT);
    ck_assert_int_eq(npy_write_atomic("", CLOPS_DATA_TYPE_FLOAT32, 1, shape, data, 16, msg, sizeof msg),
                     NPY_ERR_ARGUMENT);
    uint64_t huge[3] = {UINT64_MAX / 2, 4, 1};
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 3, huge, data, 16, msg, sizeof msg),
                     NPY_ERR_OVERFLOW);
    ck_assert(!file_exists(path));
    ck_assert_uint_eq(count_dir_entries(tmp_dir), before);

    /* an existing file is replaced whole */
    path_in_tmp(path, sizeof path, "replace.npy");
    write_file(path, "old contents that are longer than nothing", 41);
    ck_assert_int_eq(npy_write_atomic(path, CLOPS_DATA_TYPE_FLOAT32, 1, shape, data, sizeof data, msg, sizeof msg),
                     NPY_OK);
    npy_array a;
    ck_assert_int_eq(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg), NPY_OK);
    ck_assert_mem_eq(a.data, data, sizeof data);
    npy_free(&a);
    unlink(path);
    ck_assert_uint_eq(count_dir_entries(tmp_dir), before);
}
END_TEST

START_TEST(test_descr_table)
{
    ck_assert_str_eq(npy_descr(CLOPS_DATA_TYPE_BOOL), "|b1");
    ck_assert_str_eq(npy_descr(CLOPS_DATA_TYPE_INT8), "|i1");
    ck_assert_str_eq(npy_descr(CLOPS_DATA_TYPE_UINT8), "|u1");
    ck_assert_str_eq(npy_descr(CLOPS_DATA_TYPE_FLOAT16), "<f2");
    ck_assert_str_eq(npy_descr(CLOPS_DATA_TYPE_BFLOAT16), "<u2");
    ck_assert_str_eq(npy_descr(CLOPS_DATA_TYPE_COMPLEX128), "<c16");
    ck_assert_ptr_null(npy_descr(CLOPS_DATA_TYPE_UNKNOWN));
}
END_TEST

/* ---- suite ----------------------------------------------------------------------------------- */

static void remove_tmp_dir(void)
{
    tc_rm_rf(tmp_dir);
}

static Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tc_suite_case(s, "read", -1);
    tcase_add_loop_test(tc, test_read_every_dtype, 0, DTYPE_CASES);
    TC_TESTS(tc, test_fortran_order_strides, test_fortran_fixture_matches_c_order);
    tcase_add_loop_test(tc, test_valid_header_spellings, 0, SHAPE_CASES);
    TC_TESTS(tc, test_bfloat16_override, test_unreadable_paths, test_status_names);

    tc = tc_suite_case(s, "broken", -1);
    tcase_add_loop_test(tc, test_broken_file, 0, BAD_CASES);

    tc = tc_suite_case(s, "write", -1);
    tcase_add_loop_test(tc, test_writer_round_trip, 0, ALL_TYPES);
    TC_TESTS(tc, test_writer_matches_numpy_bytes, test_writer_alignment, test_writer_empty_tensor,
             test_writer_atomic_failures, test_descr_table);
    return s;
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/clops_test_npy.XXXXXX", base != NULL && base[0] ? base : "/tmp");
    if (mkdtemp(tmp_dir) == NULL) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    const int failed = tc_run_failures(npy_suite(), 0);
    remove_tmp_dir();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
