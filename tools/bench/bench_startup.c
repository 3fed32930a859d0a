/*
 * bench_startup.c - `clops bench-startup`: what it costs to get an operator ready.
 *
 * For every program clops builds (one per operator variant), in one run, on one
 * device:
 *   cold      clops_operator_create on a fresh context with an empty clops cache
 *             and, unless --driver-cache, PoCL's own kernel cache off
 *             (POCL_KERNEL_CACHE=0, set before the first OpenCL call): a compile
 *   in-process a second operator of the same variant on the same context
 *   disk      the same variant on a new context: clCreateProgramWithBinary from
 *             clops's on-disk cache
 * Each operator's program_origin is checked ("compiled", "in-process", "disk
 * cache"), so a row cannot time the wrong path. Then `clops tune --quick` runs
 * into the same temporary cache and the tuned against default throughput of each
 * tuned variant is printed (both measured in that run, profiling events, medians).
 * The temporary cache is removed at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <clops/clops.h>

#include "bench.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct variant {
    clops_operator_type type;
    clops_depth_space_order order;
    clops_data_type dtype, itype;
    uint32_t block;
} variant;

/* Descriptors for a small tensor of the variant (sizes do not change the program). */
typedef struct desc_storage {
    clops_tensor_desc in, idx, out;
    clops_depth_to_space_desc ds;
    clops_max_unpooling_desc mu;
    clops_operator_desc op;
} desc_storage;

static void make_desc(const variant *v, desc_storage *d)
{
    const uint32_t b = v->block;
    memset(d, 0, sizeof *d);
    d->in.data_type = d->out.data_type = v->dtype;
    if (v->type == CLOPS_OPERATOR_MAX_UNPOOLING) {
        const clops_tensor_desc in = {v->dtype, {1, 2, 4, 4}, NULL}, out = {v->dtype, {1, 2, 8, 8}, NULL};
        d->in = in;
        d->out = out;
        d->idx = in;
        d->idx.data_type = v->itype;
        d->mu = (clops_max_unpooling_desc){&d->in, &d->idx, &d->out, CLOPS_INDICES_FLAT};
        d->op = (clops_operator_desc){v->type, &d->mu};
        return;
    }
    const clops_tensor_desc deep = {v->dtype, {1, 4 * b * b, 4, 4}, NULL}, wide = {v->dtype, {1, 4, 4 * b, 4 * b}, NULL};
    d->in = v->type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? deep : wide;
    d->out = v->type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? wide : deep;
    d->ds = (clops_depth_to_space_desc){&d->in, &d->out, b, v->order};
    d->op = (clops_operator_desc){v->type, &d->ds};
}

static const char *variant_name(const variant *v, char *buf, size_t size)
{
    if (v->type == CLOPS_OPERATOR_MAX_UNPOOLING)
        snprintf(buf, size, "MaxUnpooling %s idx %s", clops_data_type_name(v->dtype), clops_data_type_name(v->itype));
    else
        snprintf(buf, size, "%s %s %s b=%u", v->type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "DepthToSpace" : "SpaceToDepth",
                 v->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "dcr" : "crd", clops_data_type_name(v->dtype), v->block);
    return buf;
}

/* Creates an operator, timing it, and checks where its program came from. */
static int timed_create(clops_context *ctx, const desc_storage *d, const char *want_origin, double *seconds)
{
    clops_operator *op = NULL;
    const double t0 = now();
    const clops_status st = clops_operator_create(ctx, &d->op, &op);
    *seconds = now() - t0;
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "clops: error: bench-startup: %s: %s\n", clops_status_name(st), clops_last_error_message());
        return -1;
    }
    clops_operator_info info;
    clops_operator_get_info(op, &info);
    const int ok = strcmp(info.program_origin, want_origin) == 0;
    if (!ok)
        fprintf(stderr, "clops: error: bench-startup: program came from \"%s\", expected \"%s\"%s%s\n",
                info.program_origin, want_origin, info.fallback_reason[0] ? "; fallback: " : "",
                info.fallback_reason);
    clops_operator_free(op);
    return ok ? 0 : -1;
}

static void print_tuned(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    (void)user;
    (void)done;
    (void)total;
    printf("%-14s %s %-10s b=%u  default %7.2f GB/s  tuned %7.2f GB/s  (chunk %u, local %zu,%zu,%zu)  ratio %.2f%s\n",
           r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "DepthToSpace" : "SpaceToDepth",
           r->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "dcr" : "crd", clops_data_type_name(r->data_type), r->block_size,
           r->default_gbps, r->gbps, r->chunk, r->local[0], r->local[1], r->local[2],
           r->default_gbps > 0 ? r->gbps / r->default_gbps : 0.0, r->kept ? "" : "  (default kept)");
    fflush(stdout);
}

/* Removes the temporary cache: its files (entries, tuning database), then it. */
static void remove_flat_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    if (rmdir(dir) != 0) fprintf(stderr, "clops: bench-startup: could not remove %s\n", dir);
}

static void usage(FILE *f)
{
    fputs("usage: clops bench-startup [--device N] [--quick] [--driver-cache]\n"
          "\n"
          "Per program clops builds: cold build, in-process reuse and on-disk cache load\n"
          "times of clops_operator_create, then the tuned against default throughput of\n"
          "`clops tune --quick`, all in one run on one device, in a temporary cache.\n"
          "\n"
          "options:\n"
          "  --device N       device index from `clops devices` (default: the default\n"
          "                   device, as `clops run` picks it: CLOPS_DEVICE, else the\n"
          "                   first GPU, else any device)\n"
          "  --quick          FLOAT32 and UINT8, block 2, and two MaxUnpooling variants\n"
          "  --driver-cache   leave PoCL's own kernel cache on (cold then means: clops's\n"
          "                   cache empty, the driver's as it is)\n"
          "  --help           show this help\n",
          f);
}

int clops_bench_startup_main(int argc, char **argv)
{
    unsigned device = 0;
    int quick = 0, driver_cache = 0, device_given = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--driver-cache")) {
            driver_cache = 1;
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            char *end;
            const unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || argv[i][0] < '0' || argv[i][0] > '9' || v > 1024) {
                fprintf(stderr, "clops: bench-startup: --device needs a device index, not '%s'\n", argv[i]);
                return 2;
            }
            device = (unsigned)v;
            device_given = 1;
        } else {
            fprintf(stderr, "clops: bench-startup: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!driver_cache) setenv("POCL_KERNEL_CACHE", "0", 1); /* before the first OpenCL call */
    char dir[] = "/tmp/clops-bench-startup-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("clops: bench-startup: mkdtemp");
        return 1;
    }
    setenv("CLOPS_CACHE_DIR", dir, 1);
    unsetenv("CLOPS_CACHE");
    if (!device_given) { /* the default device, as every other command takes it */
        int host = 0;
        const clops_status dst = clops_default_device(&host, &device);
        if (dst != CLOPS_SUCCESS || host) {
            fprintf(stderr, "clops: bench-startup: %s\n",
                    dst != CLOPS_SUCCESS ? clops_last_error_message()
                                         : "the default device is the host backend, which builds no programs; "
                                           "give --device N");
            rmdir(dir);
            return 1;
        }
    }

    static const clops_data_type all_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                                CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_COMPLEX128};
    static const clops_data_type quick_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT32};
    static const uint32_t all_blocks[] = {2, 3, 4, 8}, quick_blocks[] = {2};
    const clops_data_type *types = quick ? quick_types : all_types;
    const uint32_t *blocks = quick ? quick_blocks : all_blocks;
    const size_t ntypes = quick ? 2 : 5, nblocks = quick ? 1 : 4;
    variant vs[256];
    size_t nv = 0;
    /* SpaceToDepth variants are in DepthToSpace's programs (one program holds both
     * kernels for a width, block and order), so listing them would time reuse. */
    for (int op = 0; op < 1; op++)
        for (int order = 0; order < 2; order++)
            for (size_t t = 0; t < ntypes; t++)
                for (size_t b = 0; b < nblocks; b++)
                    vs[nv++] = (variant){op ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE,
                                         (clops_depth_space_order)order, types[t], CLOPS_DATA_TYPE_UNKNOWN, blocks[b]};
    static const clops_data_type itypes[] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_INT64};
    for (size_t t = 0; t < ntypes; t++)
        for (size_t i = 0; i < 2; i++)
            vs[nv++] = (variant){CLOPS_OPERATOR_MAX_UNPOOLING, CLOPS_ORDER_DEPTH_COLUMN_ROW, types[t], itypes[i], 0};

    clops_context *a = NULL;
    clops_status st = clops_context_create_device(device, &a);
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "clops: error: bench-startup: %s: %s\n", clops_status_name(st), clops_last_error_message());
        remove_flat_dir(dir);
        return 1;
    }
    printf("# clops bench-startup on %s; cache %s; PoCL kernel cache %s\n", clops_context_device_name(a), dir,
           driver_cache ? "as configured" : "off (POCL_KERNEL_CACHE=0)");
    printf("# one row per program; SpaceToDepth uses the DepthToSpace program of the same width, block, order\n");
    printf("%-36s %12s %14s %12s\n", "program (operator variant)", "cold ms", "in-process ms", "disk ms");
    double *cold = calloc(nv, sizeof *cold), *warm = calloc(nv, sizeof *warm), *disk = calloc(nv, sizeof *disk);
    int rc = cold && warm && disk ? 0 : 1;
    for (size_t i = 0; rc == 0 && i < nv; i++) {
        desc_storage d;
        make_desc(&vs[i], &d);
        clops_context *b = NULL;
        rc = timed_create(a, &d, "compiled", &cold[i]);
        if (rc == 0) rc = timed_create(a, &d, "in-process", &warm[i]);
        if (rc == 0 && (st = clops_context_create_device(device, &b)) != CLOPS_SUCCESS) rc = -1;
        if (rc == 0) rc = timed_create(b, &d, "disk cache", &disk[i]);
        clops_context_free(b);
        char name[96];
        if (rc == 0)
            printf("%-36s %12.1f %14.3f %12.2f\n", variant_name(&vs[i], name, sizeof name), cold[i] * 1e3,
                   warm[i] * 1e3, disk[i] * 1e3);
        fflush(stdout);
    }
    if (rc == 0) {
        qsort(cold, nv, sizeof *cold, cmp_double);
        qsort(warm, nv, sizeof *warm, cmp_double);
        qsort(disk, nv, sizeof *disk, cmp_double);
        printf("%-36s %12.1f %14.3f %12.2f\n", "median over programs", cold[nv / 2] * 1e3, warm[nv / 2] * 1e3,
               disk[nv / 2] * 1e3);
        printf("\n# default against tuned work-group and chunk choice (clops tune --quick, same run)\n");
        st = clops_tune(device, 1, print_tuned, NULL);
        if (st != CLOPS_SUCCESS) {
            fprintf(stderr, "clops: error: bench-startup: tune: %s: %s\n", clops_status_name(st),
                    clops_last_error_message());
            rc = 1;
        }
    }
    clops_context_free(a);
    free(cold);
    free(warm);
    free(disk);
    remove_flat_dir(dir);
    return rc ? 1 : 0;
}
