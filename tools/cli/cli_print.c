/* cli_print.c - clops print: a .npy tensor, numpy-style. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>

#include "cli.h"

static const cli_option print_options[] = {
    {"--type", "bfloat16", 0, opt_type,
     "read 2-byte data ('<u2', '<i2', '<f2') as BFLOAT16 and show it as float", 0},
    OPT_HELP, OPT_END};


/* ---- print ------------------------------------------------------------------------------------- */

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0 && mant == 0) {
        bits = sign;
    } else if (exp == 0) { /* subnormal: normalise */
        exp = 113;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            exp--;
        }
        bits = sign | exp << 23 | (mant & 0x3ffu) << 13;
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | mant << 13;
    } else {
        bits = sign | (exp + 112) << 23 | mant << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static float bfloat16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Precision a float is shown at: the shortest text that reads back as the same value
 * of its own type. */
typedef enum float_kind { FLOAT_HALF, FLOAT_BFLOAT16, FLOAT_SINGLE, FLOAT_DOUBLE } float_kind;

/* float to IEEE half, rounding to nearest even. */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) /* 65520 and up round to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below 2^-14: a subnormal half, in units of 2^-24 */
        float a;
        memcpy(&a, &absx, sizeof a);
        float scaled = a * 16777216.0f;
        uint32_t m = (uint32_t)scaled;
        float frac = scaled - (float)m;
        if (frac > 0.5f || (frac == 0.5f && (m & 1u)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t h = ((absx >> 23) - 112u) << 10 | (absx & 0x7fffffu) >> 13;
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

/* float to bfloat16, rounding to nearest even. */
static uint16_t float_to_bfloat16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static int reads_back(double back, double v, float_kind kind)
{
    switch (kind) {
    case FLOAT_HALF: return float_to_half((float)back) == float_to_half((float)v);
    case FLOAT_BFLOAT16: return float_to_bfloat16((float)back) == float_to_bfloat16((float)v);
    case FLOAT_SINGLE: return (float)back == (float)v;
    default: return back == v;
    }
}

/* The shortest %g that reads back as the same value; plain notation from 1e-4 up to
 * 1e16 and "1." for integral values, as numpy. */
static void format_float(double v, float_kind kind, char *buf, size_t size)
{
    if (v != v) {
        snprintf(buf, size, "nan");
        return;
    }
    if (v > DBL_MAX || v < -DBL_MAX) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (reads_back(strtod(buf, NULL), v, kind))
            break;
    }
    char sci[48];
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    const char *e = strchr(sci, 'e');
    int exp10 = e != NULL ? atoi(e + 1) : 0;
    if (exp10 >= -4 && exp10 < 16)
        snprintf(buf, size, "%.*g", prec > exp10 + 1 ? prec : exp10 + 1, v);
    else
        snprintf(buf, size, "%.*g", prec, v);
    if (strpbrk(buf, ".en") == NULL && strlen(buf) + 2 <= size)
        strcat(buf, ".");
}

static void format_complex(double re, double im, float_kind kind, char *buf, size_t size)
{
    char a[40], b[40];
    format_float(re, kind, a, sizeof a);
    format_float(im, kind, b, sizeof b);
    snprintf(buf, size, "%s%s%sj", a, b[0] == '-' ? "" : "+", b);
}

/* Formats element `index` (in elements from the start of the data). */
static void format_element(const npy_array *a, uint64_t index, char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)a->data + index * a->itemsize;
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        int64_t i64; uint64_t u64; float f32[2]; double f64[2];
    } v;
    memcpy(&v, p, a->itemsize);
    switch (a->data_type) {
    case CLOPS_DATA_TYPE_BOOL: snprintf(buf, size, "%s", v.u8 ? "True" : "False"); break;
    case CLOPS_DATA_TYPE_INT8: snprintf(buf, size, "%d", v.i8); break;
    case CLOPS_DATA_TYPE_UINT8: snprintf(buf, size, "%u", v.u8); break;
    case CLOPS_DATA_TYPE_INT16: snprintf(buf, size, "%d", v.i16); break;
    case CLOPS_DATA_TYPE_UINT16: snprintf(buf, size, "%u", v.u16); break;
    case CLOPS_DATA_TYPE_INT32: snprintf(buf, size, "%" PRId32, v.i32); break;
    case CLOPS_DATA_TYPE_UINT32: snprintf(buf, size, "%" PRIu32, v.u32); break;
    case CLOPS_DATA_TYPE_INT64: snprintf(buf, size, "%" PRId64, v.i64); break;
    case CLOPS_DATA_TYPE_UINT64: snprintf(buf, size, "%" PRIu64, v.u64); break;
    case CLOPS_DATA_TYPE_FLOAT16: format_float(half_to_float(v.u16), FLOAT_HALF, buf, size); break;
    case CLOPS_DATA_TYPE_BFLOAT16: format_float(bfloat16_to_float(v.u16), FLOAT_BFLOAT16, buf, size); break;
    case CLOPS_DATA_TYPE_FLOAT32: format_float(v.f32[0], FLOAT_SINGLE, buf, size); break;
    case CLOPS_DATA_TYPE_FLOAT64: format_float(v.f64[0], FLOAT_DOUBLE, buf, size); break;
    case CLOPS_DATA_TYPE_COMPLEX64: format_complex(v.f32[0], v.f32[1], FLOAT_SINGLE, buf, size); break;
    case CLOPS_DATA_TYPE_COMPLEX128: format_complex(v.f64[0], v.f64[1], FLOAT_DOUBLE, buf, size); break;
    default: snprintf(buf, size, "?"); break;
    }
}

/* Walks every element in logical (row-major) order; width < 0 measures, else prints. */
static void walk(const npy_array *a, unsigned depth, uint64_t offset, int *width, int measure)
{
    char buf[96];
    if (depth == a->ndim) {
        format_element(a, offset, buf, sizeof buf);
        int len = (int)strlen(buf);
        if (measure && len > *width)
            *width = len;
        else if (!measure)
            printf("%*s", *width, buf);
        return;
    }
    if (!measure)
        putchar('[');
    for (uint64_t i = 0; i < a->shape[depth]; i++) {
        if (i > 0 && !measure) {
            if (depth + 1 == a->ndim)
                putchar(' ');
            for (unsigned k = depth + 1; k < a->ndim; k++)
                putchar('\n');
            for (unsigned k = 0; depth + 1 < a->ndim && k <= depth; k++)
                putchar(' ');
        }
        walk(a, depth + 1, offset + i * a->strides[depth], width, measure);
    }
    if (!measure)
        putchar(']');
}

static int run_print(const cli_command *cmd, const cli_args *args)
{
    npy_array a;
    char msg[NPY_MESSAGE_SIZE];
    (void)cmd;
    npy_status st = npy_read(args->positional[0], args->type_override, &a, msg, sizeof msg);
    if (st != NPY_OK)
        return fail_npy(args->positional[0], st, msg);
    if (a.count == 0) {
        puts("[]");
    } else {
        int width = 0;
        walk(&a, 0, 0, &width, 1);
        walk(&a, 0, 0, &width, 0);
        putchar('\n');
    }
    npy_free(&a);
    if (fflush(stdout) != 0)
        return fail_line("print", "cannot write to standard output");
    return EXIT_OK;
}

const cli_command cli_print_command = {
    "print", "FILE.npy", 1,
    "Prints a .npy tensor numpy-style: nested brackets, integers plainly, floats\n"
    "(float16 and bfloat16 too) in the shortest form that reads back exactly,\n"
    "complex as a+bj, bool as True/False.",
    print_options, NULL, run_print};
