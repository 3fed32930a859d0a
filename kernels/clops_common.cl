/* clops_common.cl - definitions every clops program starts with.
 *
 * Build options (set by lib/, never by hand):
 *   -DELEM_BYTES=1|2|4|8|16  element width; elements move as opaque words, so no
 *                            type needs cl_khr_fp16, cl_khr_fp64 or 64-bit integers
 *   -DOFFSET_64=0|1          how sizes and strides are passed: 1: ulong (tensors past
 *                            2^32 elements, needs 64-bit integers); 0: uint
 *
 * Offsets inside kernels are size_t (idx_t): as wide as the device's addresses,
 * so any offset into a buffer fits, and the compiler knows that consecutive
 * offsets do not wrap, which lets it vectorise (with 32-bit unsigned offsets on
 * a 64-bit device it cannot: measured on PoCL, uint8 DepthToSpace ran at 0.18
 * of copy speed with uint offsets and 0.93 with size_t).
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

typedef size_t idx_t;

/* The block size in offset arithmetic. */
#ifdef BLOCK
#define B ((idx_t)BLOCK)
#endif

/* Four sizes or strides, passed by value. */
typedef struct { offs_t v[4]; } dims4;

/* Dimension d of a dims4, as an in-kernel offset. */
#define DIM(s, d) ((idx_t)(s).v[d])

/* Element offset of (n, c, h, w) under strides s. */
inline idx_t offset4(dims4 s, idx_t n, idx_t c, idx_t h, idx_t w)
{
    return n * DIM(s, 0) + c * DIM(s, 1) + h * DIM(s, 2) + w * DIM(s, 3);
}
