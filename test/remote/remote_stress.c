/* remote_stress.c - alternating executions on two devices in one process.
 *
 *   remote_stress DEVICE_A DEVICE_B COUNT
 *
 * Opens a context on each device (indices of clops_device_list; with two
 * PoCL-Remote servers, one remote device each) and runs COUNT executions,
 * alternating the device every execution and the operator every two:
 * MaxUnpooling (uint16, {2, 3, 4, 5} into {2, 3, 9, 11}, distinct pseudo-random
 * flat INT64 indices) and DepthToSpace (uint8 DCR, block 2, {1, 8, 6, 7}). Each
 * execution creates its operator, runs it through clops_operator_execute_host
 * and frees it, as one `clops run` does; its output is compared with
 * clops_host_run's. Prints the tallies; exits 0 when every execution was
 * right, 1 otherwise, 2 on a usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clops/clops.h>

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum { UP_IN = 2 * 3 * 4 * 5, UP_OUT = 2 * 3 * 9 * 11, DS_COUNT = 8 * 6 * 7 };

typedef struct stress_inputs {
    uint16_t up_x[UP_IN];
    int64_t up_idx[UP_IN];
    uint8_t ds_x[DS_COUNT];
} stress_inputs;

/* Distinct flat indices: the first UP_IN of a shuffled 0..UP_OUT-1. */
static void make_inputs(stress_inputs *in, uint64_t seed)
{
    static int64_t all[UP_OUT];
    for (int64_t i = 0; i < UP_OUT; i++) all[i] = i;
    for (size_t i = UP_OUT - 1; i > 0; i--) {
        const size_t j = (size_t)(splitmix64(&seed) % (i + 1));
        const int64_t t = all[i];
        all[i] = all[j], all[j] = t;
    }
    for (size_t i = 0; i < UP_IN; i++) in->up_idx[i] = all[i], in->up_x[i] = (uint16_t)splitmix64(&seed);
    for (size_t i = 0; i < DS_COUNT; i++) in->ds_x[i] = (uint8_t)splitmix64(&seed);
}

/* One execution of operator `which` (0: MaxUnpooling, 1: DepthToSpace) on ctx;
 * 0 when its output equals the host kernels'. */
static int run_one(clops_context *ctx, int which, const stress_inputs *in, unsigned n)
{
    clops_tensor_desc ux = {CLOPS_DATA_TYPE_UINT16, {2, 3, 4, 5}, NULL}, ui = {CLOPS_DATA_TYPE_INT64, {2, 3, 4, 5}, NULL};
    clops_tensor_desc uy = {CLOPS_DATA_TYPE_UINT16, {2, 3, 9, 11}, NULL};
    clops_max_unpooling_desc up = {&ux, &ui, &uy, CLOPS_INDICES_FLAT};
    clops_tensor_desc dx = {CLOPS_DATA_TYPE_UINT8, {1, 8, 6, 7}, NULL}, dy = {CLOPS_DATA_TYPE_UINT8, {1, 2, 12, 14}, NULL};
    clops_depth_to_space_desc ds = {&dx, &dy, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    const clops_operator_desc desc = which == 0 ? (clops_operator_desc){CLOPS_OPERATOR_MAX_UNPOOLING, &up}
                                                : (clops_operator_desc){CLOPS_OPERATOR_DEPTH_TO_SPACE, &ds};
    unsigned char y[UP_OUT * 2], ref[UP_OUT * 2];
    const size_t yb = which == 0 ? sizeof y : DS_COUNT;
    const clops_host_buffers hb = which == 0 ? (clops_host_buffers){in->up_x, sizeof in->up_x, in->up_idx,
                                                                     sizeof in->up_idx, y, yb}
                                             : (clops_host_buffers){in->ds_x, DS_COUNT, NULL, 0, y, yb};
    clops_host_buffers rb = hb;
    rb.output = ref;
    memset(y, 0xA5, sizeof y);
    clops_operator *op = NULL;
    clops_status st = clops_operator_create(ctx, &desc, &op);
    if (st == CLOPS_SUCCESS) st = clops_operator_execute_host(op, &hb);
    clops_operator_free(op);
    if (st != CLOPS_SUCCESS) {
        printf("execution %u (%s): %s: %s\n", n, which ? "DepthToSpace" : "MaxUnpooling", clops_status_name(st),
               clops_last_error_message());
        return 1;
    }
    if (clops_host_run(&desc, &rb) != CLOPS_SUCCESS || memcmp(y, ref, yb) != 0) {
        printf("execution %u (%s): wrong output\n", n, which ? "DepthToSpace" : "MaxUnpooling");
        return 1;
    }
    return 0;
}

static int parse_uint(const char *s, unsigned *out)
{
    char *end = NULL;
    const unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > 1000000ul) return 0;
    *out = (unsigned)v;
    return 1;
}

int main(int argc, char **argv)
{
    unsigned dev[2], count;
    if (argc != 4 || !parse_uint(argv[1], &dev[0]) || !parse_uint(argv[2], &dev[1]) || !parse_uint(argv[3], &count)) {
        fprintf(stderr, "usage: remote_stress DEVICE_A DEVICE_B COUNT\n");
        return 2;
    }
    clops_context *ctx[2] = {NULL, NULL};
    for (int d = 0; d < 2; d++) {
        const clops_status st = clops_context_create_device(dev[d], &ctx[d]);
        if (st != CLOPS_SUCCESS) {
            printf("device %u: %s: %s\n", dev[d], clops_status_name(st), clops_last_error_message());
            clops_context_free(ctx[0]);
            return 1;
        }
        printf("device %u: %s\n", dev[d], clops_context_device_name(ctx[d]));
    }
    static stress_inputs in;
    make_inputs(&in, 47);
    unsigned failed = 0;
    for (unsigned n = 0; n < count; n++) failed += (unsigned)run_one(ctx[n % 2], (int)(n / 2 % 2), &in, n);
    clops_context_free(ctx[0]);
    clops_context_free(ctx[1]);
    printf("%u executions on devices %u and %u, %u failed\n", count, dev[0], dev[1], failed);
    return failed == 0 && count > 0 ? 0 : 1;
}
