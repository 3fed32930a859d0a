/* remote_cases.c - the operator cases of the remote suite, in one process.
 *
 *   remote_cases DEVICE OUTDIR
 *
 * Runs every case (DepthToSpace and SpaceToDepth in both orders with blocks 2
 * and 3, MaxUnpooling with each index type, pooling-shaped and with
 * conflicting duplicates, for all 15 data types) on device DEVICE (an index of
 * clops_device_list) through clops_operator_execute_host, checks each output
 * against clops_host_run in this process, and writes it to OUTDIR/NAME.bin so
 * that run_remote.sh can compare the outputs of different devices (a local one
 * and remote ones) byte for byte. One process for all cases: a PoCL-Remote
 * client pays a connection set-up per process. Inputs are the same pseudo-random
 * bits on every run. Prints one line per failure and a summary; exits 0 when
 * every case passed, 1 otherwise, 2 on a usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clops/clops.h>

static const clops_data_type types[] = {
    CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16,   CLOPS_DATA_TYPE_UINT32,    CLOPS_DATA_TYPE_UINT16,
    CLOPS_DATA_TYPE_UINT8,   CLOPS_DATA_TYPE_INT32,     CLOPS_DATA_TYPE_INT16,     CLOPS_DATA_TYPE_INT8,
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_UINT64,    CLOPS_DATA_TYPE_INT64,     CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128,
};

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random bytes (0 or 1 per element for BOOL). */
static void fill(unsigned char *p, size_t bytes, clops_data_type t, uint64_t seed)
{
    for (size_t i = 0; i < bytes; i++) {
        const unsigned char b = (unsigned char)splitmix64(&seed);
        p[i] = t == CLOPS_DATA_TYPE_BOOL ? (unsigned char)(b & 1u) : b;
    }
}

static size_t count(const uint32_t s[4])
{
    return (size_t)s[0] * s[1] * s[2] * s[3];
}

typedef struct run_state {
    clops_context *ctx;
    const char *outdir;
    unsigned cases, failed;
} run_state;

static void fail(run_state *rs, const char *name, const char *what, clops_status st)
{
    rs->failed++;
    printf("FAIL %s: %s: %s: %s\n", name, what, clops_status_name(st), clops_last_error_message());
}

/* Runs one case on the device and on the host kernels, compares, writes the output. */
static void run_case(run_state *rs, const char *name, const clops_operator_desc *desc, const void *x, size_t xb,
                     const void *idx, size_t ib, size_t yb)
{
    rs->cases++;
    unsigned char *y = malloc(yb ? yb : 1), *ref = malloc(yb ? yb : 1);
    if (!y || !ref) {
        fail(rs, name, "malloc", CLOPS_ERROR_OUT_OF_HOST_MEMORY);
        free(y);
        free(ref);
        return;
    }
    memset(y, 0xA5, yb);
    const clops_host_buffers hb = {x, xb, idx, ib, y, yb};
    const clops_host_buffers rb = {x, xb, idx, ib, ref, yb};
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(rs->ctx, desc, &op);
    if (st == CLOPS_SUCCESS) st = clops_operator_execute_host(op, &hb);
    clops_operator_free(op);
    if (st != CLOPS_SUCCESS) {
        fail(rs, name, "device", st);
    } else if ((st = clops_host_run(desc, &rb)) != CLOPS_SUCCESS) {
        fail(rs, name, "host kernels", st);
    } else if (memcmp(y, ref, yb) != 0) {
        rs->failed++;
        printf("FAIL %s: the device's output differs from the host kernels'\n", name);
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.bin", rs->outdir, name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(y, 1, yb, f) != yb || fclose(f) != 0) {
            rs->failed++;
            printf("FAIL %s: cannot write %s\n", name, path);
        }
    }
    free(y);
    free(ref);
}

static void depth_space_cases(run_state *rs, clops_data_type t, size_t es, uint64_t seed)
{
    static const char *const order_names[2] = {"dcr", "crd"};
    unsigned char *x = malloc(2 * 18 * 6 * 12 * es);
    if (!x) {
        fail(rs, clops_data_type_name(t), "malloc", CLOPS_ERROR_OUT_OF_HOST_MEMORY);
        return;
    }
    for (uint32_t b = 2; b <= 3; b++) {
        for (int o = 0; o < 2; o++) {
            char name[128];
            /* DepthToSpace {2, 2b^2, 5, 7} -> {2, 2, 5b, 7b}. */
            clops_tensor_desc xd = {t, {2, 2 * b * b, 5, 7}, NULL}, yd = {t, {2, 2, 5 * b, 7 * b}, NULL};
            clops_depth_to_space_desc d2s = {&xd, &yd, b, (clops_depth_space_order)o};
            clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &d2s};
            fill(x, count(xd.sizes) * es, t, seed + b * 2 + (uint64_t)o);
            snprintf(name, sizeof name, "d2s_%s_b%u_%s", order_names[o], b, clops_data_type_name(t));
            run_case(rs, name, &desc, x, count(xd.sizes) * es, NULL, 0, count(yd.sizes) * es);
            /* SpaceToDepth {2, 3, 6, 12} -> {2, 3b^2, 6/b, 12/b}. */
            clops_tensor_desc sx = {t, {2, 3, 6, 12}, NULL}, sy = {t, {2, 3 * b * b, 6 / b, 12 / b}, NULL};
            clops_space_to_depth_desc s2d = {&sx, &sy, b, (clops_depth_space_order)o};
            clops_operator_desc sdesc = {CLOPS_OPERATOR_SPACE_TO_DEPTH, &s2d};
            fill(x, count(sx.sizes) * es, t, seed + 16 + b * 2 + (uint64_t)o);
            snprintf(name, sizeof name, "s2d_%s_b%u_%s", order_names[o], b, clops_data_type_name(t));
            run_case(rs, name, &sdesc, x, count(sx.sizes) * es, NULL, 0, count(sy.sizes) * es);
        }
    }
    free(x);
}

/* Indices of input {2, 3, 5, 7} into output {2, 3, 10, 14}: one position of
 * each 2x2 window (pooling-shaped), or anywhere (duplicates with different
 * values: the host resolves them). Stored as `ib`-byte integers. */
static void make_indices(unsigned char *idx, size_t ib, int anywhere, uint64_t seed)
{
    size_t k = 0;
    for (uint64_t nc = 0; nc < 6; nc++)
        for (uint64_t h = 0; h < 5; h++)
            for (uint64_t w = 0; w < 7; w++, k++) {
                const uint64_t r = splitmix64(&seed);
                const uint64_t v = anywhere ? r % (6 * 10 * 14) : (nc * 10 + 2 * h + (r & 1)) * 14 + 2 * w + ((r >> 1) & 1);
                if (ib == 4) {
                    const uint32_t v32 = (uint32_t)v;
                    memcpy(idx + k * 4, &v32, 4);
                } else {
                    memcpy(idx + k * 8, &v, 8);
                }
            }
}

static void unpool_cases(run_state *rs, clops_data_type t, size_t es, uint64_t seed)
{
    static const struct {
        clops_data_type type;
        int anywhere;
        const char *name;
    } kinds[] = {{CLOPS_DATA_TYPE_UINT32, 0, "u32"},
                 {CLOPS_DATA_TYPE_UINT64, 0, "u64"},
                 {CLOPS_DATA_TYPE_INT64, 0, "i64"},
                 {CLOPS_DATA_TYPE_INT64, 1, "i64_duplicates"}};
    unsigned char x[2 * 3 * 5 * 7 * 16], idx[2 * 3 * 5 * 7 * 8];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const size_t ib = clops_data_type_size(kinds[i].type);
        clops_tensor_desc xd = {t, {2, 3, 5, 7}, NULL}, id = {kinds[i].type, {2, 3, 5, 7}, NULL};
        clops_tensor_desc yd = {t, {2, 3, 10, 14}, NULL};
        clops_max_unpooling_desc up = {&xd, &id, &yd, CLOPS_INDICES_FLAT};
        clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &up};
        fill(x, count(xd.sizes) * es, t, seed + 32 + i);
        make_indices(idx, ib, kinds[i].anywhere, seed + 48 + i);
        char name[128];
        snprintf(name, sizeof name, "unpool_%s_%s", kinds[i].name, clops_data_type_name(t));
        run_case(rs, name, &desc, x, count(xd.sizes) * es, idx, count(id.sizes) * ib, count(yd.sizes) * es);
    }
}

int main(int argc, char **argv)
{
    char *end = NULL;
    const unsigned long device = argc == 3 ? strtoul(argv[1], &end, 10) : 0;
    if (argc != 3 || !end || *end || end == argv[1]) {
        fprintf(stderr, "usage: remote_cases DEVICE OUTDIR\n");
        return 2;
    }
    run_state rs = {NULL, argv[2], 0, 0};
    clops_status st = clops_context_create_device((unsigned)device, &rs.ctx);
    if (st != CLOPS_SUCCESS) {
        printf("FAIL device %lu: %s: %s\n", device, clops_status_name(st), clops_last_error_message());
        return 1;
    }
    printf("device %lu: %s\n", device, clops_context_device_name(rs.ctx));
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const size_t es = clops_data_type_size(types[i]);
        depth_space_cases(&rs, types[i], es, 1000 * (i + 1));
        unpool_cases(&rs, types[i], es, 1000 * (i + 1));
    }
    clops_context_free(rs.ctx);
    printf("%u cases, %u failed\n", rs.cases, rs.failed);
    return rs.failed == 0 && rs.cases > 0 ? 0 : 1;
}
