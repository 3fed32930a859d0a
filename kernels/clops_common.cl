/* clops_common.cl - definitions every clops program starts with.
 *
 * Build options (set by lib/, never by hand):
 *   -DELEM_BYTES=1|2|4|8|16  element width; elements move as opaque words, so no
 *                            type needs cl_khr_fp16, cl_khr_fp64 or 64-bit integers
 *   -DOFFSET_64=0|1          1: offsets and sizes are ulong (buffers past 4 GiB of
 *                            elements); 0: uint, which every device has
 */
#if ELEM_BYTES == 1
typedef uchar elem_t;
#elif ELEM_BYTES == 2
typedef ushort elem_t;
#elif ELEM_BYTES == 4
typedef uint elem_t;
#elif ELEM_BYTES == 8
typedef uint2 elem_t;
#elif ELEM_BYTES == 16
typedef uint4 elem_t;
#else
#error "ELEM_BYTES must be 1, 2, 4, 8 or 16"
#endif

#if OFFSET_64
typedef ulong offs_t;
#else
typedef uint offs_t;
#endif

/* The block size in offset arithmetic, so b*b cannot wrap where offsets are ulong. */
#ifdef BLOCK
#define B ((offs_t)BLOCK)
#endif

/* Four sizes or strides, passed by value. */
typedef struct { offs_t v[4]; } dims4;

/* Element offset of (n, c, h, w) under strides s. */
inline offs_t offset4(dims4 s, offs_t n, offs_t c, offs_t h, offs_t w)
{
    return n * s.v[0] + c * s.v[1] + h * s.v[2] + w * s.v[3];
}
