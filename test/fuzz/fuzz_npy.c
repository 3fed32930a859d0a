/*
 * fuzz_npy.c - the .npy reader (tools/common/npy.c) on arbitrary bytes.
 *
 * The bytes are written to a file and read with npy_read(), plain and with the
 * BFLOAT16 override. Whatever it accepts must be self-consistent (shape,
 * strides, count and nbytes agree; the data is all readable), and must survive
 * a round trip: written back with npy_write_atomic() (C order) and read again,
 * it gives the same elements in the same logical order.
 */
#define _XOPEN_SOURCE 700
#include "fuzz_common.h"

#include "npy.h"

static char in_path[512], out_path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(in_path, sizeof in_path, "%s/in.npy", fz_tmpdir());
    snprintf(out_path, sizeof out_path, "%s/out.npy", fz_tmpdir());
    return 0;
}

/* Element `k` in logical (row-major) order of an array read with its strides. */
static const unsigned char *element(const npy_array *a, uint64_t k)
{
    uint64_t off = 0;
    for (unsigned d = a->ndim; d-- > 0;) {
        off += (k % a->shape[d]) * a->strides[d];
        k /= a->shape[d];
    }
    return (const unsigned char *)a->data + off * a->itemsize;
}

static void check_array(const npy_array *a)
{
    uint64_t count = 1;
    for (unsigned d = 0; d < a->ndim; d++)
        count *= a->shape[d];
    if (a->ndim > NPY_MAX_DIMS || count != a->count || a->count * a->itemsize != a->nbytes || !a->data ||
        clops_data_type_size(a->data_type) != a->itemsize)
        abort();
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < a->nbytes; i++) /* every byte readable (ASan) */
        sink ^= ((const unsigned char *)a->data)[i];
    (void)sink;
}

static void round_trip(const npy_array *a, clops_data_type override)
{
    if (a->count > (1u << 20))
        return;
    /* The logical elements in C order. */
    unsigned char *c = malloc(a->nbytes ? a->nbytes : 1);
    if (!c)
        return;
    for (uint64_t k = 0; k < a->count; k++)
        memcpy(c + k * a->itemsize, element(a, k), a->itemsize);
    char msg[NPY_MESSAGE_SIZE];
    npy_status st = npy_write_atomic(out_path, a->data_type, a->ndim, a->shape, c, a->nbytes, msg, sizeof msg);
    if (st != NPY_OK) {
        fprintf(stderr, "npy_write_atomic refused an array npy_read accepted: %s (%s)\n", npy_status_name(st), msg);
        abort();
    }
    npy_array b;
    st = npy_read(out_path, override, &b, msg, sizeof msg);
    if (st != NPY_OK || b.ndim != a->ndim || b.data_type != a->data_type || b.count != a->count ||
        b.fortran_order || memcmp(b.shape, a->shape, a->ndim * sizeof a->shape[0]) != 0 ||
        (a->nbytes && memcmp(b.data, c, a->nbytes) != 0)) {
        fprintf(stderr, "round trip differs: %s (%s)\n", npy_status_name(st), msg);
        abort();
    }
    npy_free(&b);
    free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_write_file(in_path, data, size);
    static const clops_data_type overrides[2] = {CLOPS_DATA_TYPE_UNKNOWN, CLOPS_DATA_TYPE_BFLOAT16};
    for (int i = 0; i < 2; i++) {
        npy_array a;
        char msg[NPY_MESSAGE_SIZE];
        msg[0] = '\0';
        npy_status st = npy_read(in_path, overrides[i], &a, msg, sizeof msg);
        if (st == NPY_OK) {
            check_array(&a);
            round_trip(&a, overrides[i]);
        } else if (strlen(msg) >= sizeof msg || st >= NPY_STATUS_COUNT || !msg[0] || strchr(msg, '\n')) {
            abort(); /* a one-line message for every error */
        }
        npy_free(&a);
    }
    return 0;
}
