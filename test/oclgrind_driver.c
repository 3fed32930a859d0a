/*
 * oclgrind_driver.c - runs every clops kernel once on small shapes, for
 * tools/scripts/oclgrind.sh (Oclgrind: --check-api --data-races --uninitialized).
 *
 *   DepthToSpace and SpaceToDepth: element widths 1, 2, 4, 8, 16 x orders DCR,
 *   CRD x blocks 1, 2, 3 x layouts packed NCHW, NHWC (through strides; the
 *   channels-inner kernel) and padded strides (gaps between rows and planes);
 *   the explicit-vector loop forced, widths 1, 2, 4, 8 x blocks 2, 3, 4, 8 and 5
 *   x orders x packed and padded, on rows long enough for whole vector steps;
 *   MaxUnpooling: UINT32, UINT64 and INT64 indices x packed and strided outputs,
 *   with plain indices, duplicates carrying different values and an
 *   out-of-range index (the serial plan); the windows, pool and general plans on
 *   larger inputs (unpool_plan_cases); and rows longer than a work-item's chunk
 *   for all three operators.
 *
 * Each case runs through clops_operator_execute on cl_mem buffers (the output
 * starts as a sentinel, so gaps are initialised) on the default device, and the
 * whole output buffer is compared with clops_host_run. Plain C, no Check: the
 * interpreter is slow enough. Exit status 0 when every case matches, 1 if not,
 * 77 when the default device is the host backend (no OpenCL device).
 *
 * CLOPS_OCLGRIND_QUICK=1 keeps one layout per width and order (a smoke run);
 * CLOPS_OCLGRIND_VERBOSE=1 names each case on stderr before it runs;
 * CLOPS_OCLGRIND_ONLY=TEXT runs only the cases whose label contains TEXT;
 * CLOPS_OCLGRIND_KEEP=TEXT does the same beside it, CLOPS_OCLGRIND_SKIP=TEXT leaves
 * those cases out (the script's two passes under GPU profiles);
 * CLOPS_OCLGRIND_SHARE=K/N runs only the cases whose label's hash is K modulo N
 * (and the crowded-tile case), so that runs under N device profiles that share
 * the cases out between them check each case once (tools/scripts/oclgrind.sh).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clops/clops.h>

#ifdef CLOPS_DRIVER_FORCED
/* Linked with the static clops_testable: DepthToSpace and SpaceToDepth also run
 * with forced chunk lengths (as `clops tune` builds its candidates), so the
 * multi-chunk and whole-row loops run on this (GPU-type) device too. */
#include "api/api.h"
#include "api/introspect.h"
#endif

static clops_context *ctx;
static int cases, failures, launches, verbose;
static const char *only; /* CLOPS_OCLGRIND_ONLY: run only the cases whose label contains it */
static const char *keep, *skip; /* CLOPS_OCLGRIND_KEEP / _SKIP: also require / leave out this text */
static unsigned share_k, share_n = 1; /* CLOPS_OCLGRIND_SHARE=K/N: a case runs when label_hash % N == K */
static int unshared;                        /* set around the cases every share runs */
static const char *want_live; /* set around a case whose work this kernel alone must do (none: NULL) */
#ifdef CLOPS_DRIVER_FORCED
static const int forced_chunks = 1;
#else
static const int forced_chunks = 0;
#endif

static const clops_data_type width_types[5] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16,
                                               CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT64,
                                               CLOPS_DATA_TYPE_COMPLEX128};

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint8_t next_byte(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint8_t)(rng >> 56);
}

static void fill(void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)p)[i] = next_byte();
}

static size_t span_bytes(const clops_tensor_desc *t)
{
    uint64_t st[4] = {(uint64_t)t->sizes[1] * t->sizes[2] * t->sizes[3], (uint64_t)t->sizes[2] * t->sizes[3],
                      t->sizes[3], 1};
    const uint64_t *s = t->strides ? t->strides : st;
    uint64_t span = 1;
    for (int d = 0; d < 4; d++) {
        if (!t->sizes[d])
            return 0;
        span += (t->sizes[d] - 1) * s[d];
    }
    return (size_t)(span * clops_data_type_size(t->data_type));
}

static cl_mem upload(const void *p, size_t n)
{
    cl_int err;
    cl_mem m = clCreateBuffer(clops_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n,
                              (void *)p, &err);
    if (!m) {
        fprintf(stderr, "clCreateBuffer(%zu): %d\n", n, (int)err);
        exit(1);
    }
    return m;
}

/* Runs `desc` on the device and on the host; compares the whole output buffers.
 * `chunk` (0: the default) forces the positions per work-item; `vectors` (a
 * clops_loop: 2 explicit vectors, 3 the local-memory tile; 0 the default) forces
 * DepthToSpace/SpaceToDepth's loop where it applies. */
/* FNV-1a of a case's label: shares the cases out by name, not by their order, whose regular loops
 * would give one share the same kinds of case in every group. */
static unsigned label_hash(const char *label)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)label; *p; p++) h = (h ^ *p) * 16777619u;
    return h;
}

static void run_case(const char *label, const clops_operator_desc *desc, const clops_tensor_desc *in,
                     const clops_tensor_desc *idx, const clops_tensor_desc *out, const void *idx_data,
                     clops_status want, unsigned chunk, int vectors)
{
    if ((only && !strstr(label, only)) || (keep && !strstr(label, keep)) || (skip && *skip && strstr(label, skip)))
        return;
    if (label_hash(label) % share_n != share_k && !unshared)
        return;
    cases++;
    if (verbose)
        fprintf(stderr, "case: %s\n", label);
    const size_t in_b = span_bytes(in), idx_b = idx ? span_bytes(idx) : 0, out_b = span_bytes(out);
    uint8_t *x = malloc(in_b ? in_b : 1), *init = malloc(out_b), *want_y = malloc(out_b), *got = malloc(out_b);
    fill(x, in_b);
    fill(init, out_b);
    memcpy(want_y, init, out_b);
    memcpy(got, init, out_b);
    clops_host_buffers hb = {x, in_b, idx_data, idx_b, want_y, out_b};
    clops_status st = clops_host_run(desc, &hb);
    if (st != want) {
        fprintf(stderr, "FAIL %s: clops_host_run: %s (%s)\n", label, clops_status_name(st), clops_last_error_message());
        failures++;
    }
    /* With a bad index the host leaves the output untouched while the device
     * writes the good elements: there only the status is compared (and Oclgrind
     * watches every access). */
    clops_operator *op = NULL;
#ifdef CLOPS_DRIVER_FORCED
    const clops_tuning force = {chunk, {0, 0, 0}, (clops_loop)vectors, 0};
    st = chunk || vectors ? clops_operator_create_forced(ctx, desc, &force, &op) : clops_operator_create(ctx, desc, &op);
#else
    (void)chunk;
    (void)vectors;
    st = clops_operator_create(ctx, desc, &op);
#endif
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "FAIL %s: create: %s (%s)\n", label, clops_status_name(st), clops_last_error_message());
        failures++;
        goto done;
    }
    clops_operator_info info;
    clops_operator_get_info(op, &info);
    if (info.backend != CLOPS_BACKEND_OPENCL) {
        fprintf(stderr, "FAIL %s: runs on the host (%s)\n", label, info.fallback_reason);
        failures++;
    }
    cl_mem bx = upload(x, in_b ? in_b : 1), bi = idx ? upload(idx_data, idx_b) : NULL, by = upload(init, out_b);
    clops_buffers b = {bx, bi, by};
    cl_event ev = NULL;
    st = clops_operator_execute(op, &b, 0, NULL, &ev);
    if (st == CLOPS_SUCCESS) st = clops_operator_last_status(op);
    launches++;
    if (st != want) {
        fprintf(stderr, "FAIL %s: execute: %s (%s), want %s\n", label, clops_status_name(st),
                clops_last_error_message(), clops_status_name(want));
        failures++;
    }
    if (ev) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    clFinish(clops_context_queue(ctx));
    clEnqueueReadBuffer(clops_context_queue(ctx), by, CL_TRUE, 0, out_b, got, 0, NULL, NULL);
    if (want == CLOPS_SUCCESS && memcmp(got, want_y, out_b) != 0) {
        size_t i = 0;
        while (got[i] == want_y[i])
            i++;
        fprintf(stderr, "FAIL %s: output byte %zu of %zu differs (0x%02x, want 0x%02x)\n", label, i, out_b, got[i],
                want_y[i]);
        failures++;
    }
#ifdef CLOPS_DRIVER_FORCED
    /* Indices a kernel handles must not send the work to a later one: right bits either way, but a
     * hand-off costs a pass (Oclgrind 21.10's min(ulongN, ulong) once sent every 8-byte index's
     * window to the general path). */
    clops_launched l;
    if (want_live && want == CLOPS_SUCCESS && clops_introspect_launches(op, &l) == CLOPS_SUCCESS) {
        unsigned live = 0, others = 0;
        for (unsigned i = 0; i < l.count; i++)
            if (l.live[i]) strcmp(l.kernel[i], want_live) == 0 ? live++ : others++;
        if (!live || others) {
            fprintf(stderr, "FAIL %s: %s did %s the work (%u other kernels live)\n", label, want_live,
                    live ? "not all of" : "none of", others);
            failures++;
        }
    }
#endif
    clReleaseMemObject(bx);
    if (bi)
        clReleaseMemObject(bi);
    clReleaseMemObject(by);
    clops_operator_free(op);
done:
    free(x);
    free(init);
    free(want_y);
    free(got);
}

enum { LAYOUT_PACKED, LAYOUT_NHWC, LAYOUT_PADDED, NUM_LAYOUTS };
static const char *const layout_names[NUM_LAYOUTS] = {"packed", "NHWC", "padded"};

static void strides_for(int layout, const uint32_t s[4], uint64_t st[4])
{
    if (layout == LAYOUT_NHWC) {
        st[1] = 1;
        st[3] = s[1];
        st[2] = (uint64_t)s[3] * s[1];
        st[0] = st[2] * s[2];
    } else { /* padded: one spare element per row, two per plane, three per image */
        st[3] = 1;
        st[2] = s[3] + 1;
        st[1] = st[2] * s[2] + 2;
        st[0] = st[1] * s[1] + 3;
    }
}

/* A DepthToSpace (d2s) or SpaceToDepth descriptor of `type` in `layout` (the
 * operator descriptor points into `c`). */
typedef struct ds_descs {
    uint64_t in_st[4], out_st[4];
    clops_tensor_desc in, out;
    clops_depth_to_space_desc d; /* same layout as clops_space_to_depth_desc */
    clops_operator_desc desc;
} ds_descs;

static void ds_describe(ds_descs *c, int d2s, clops_data_type type, const uint32_t in_s[4], const uint32_t out_s[4],
                        int layout, uint32_t b, int order)
{
    c->in = (clops_tensor_desc){type, {in_s[0], in_s[1], in_s[2], in_s[3]}, NULL};
    c->out = (clops_tensor_desc){type, {out_s[0], out_s[1], out_s[2], out_s[3]}, NULL};
    if (layout != LAYOUT_PACKED) {
        strides_for(layout, in_s, c->in_st);
        strides_for(layout, out_s, c->out_st);
        c->in.strides = c->in_st;
        c->out.strides = c->out_st;
    }
    c->d = (clops_depth_to_space_desc){&c->in, &c->out, b, (clops_depth_space_order)order};
    c->desc = (clops_operator_desc){d2s ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH, &c->d};
}

static void depth_space_cases(int quick)
{
    for (int op = 0; op < 2; op++)
        for (int wi = 0; wi < 5; wi++)
            for (int order = 0; order < 2; order++)
                for (uint32_t b = 1; b <= 3; b++)
                    for (int layout = 0; layout < NUM_LAYOUTS; layout++) {
                        if (quick && layout != (wi + order) % NUM_LAYOUTS)
                            continue;
                        const int d2s = op == 0;
                        /* D2S: {2, 2b^2, 3, 5} -> {2, 2, 3b, 5b}; S2D: {2, 3, 2b, 3b} -> {2, 3b^2, 2, 3}. */
                        uint32_t in_s[4], out_s[4];
                        if (d2s) {
                            const uint32_t t[4] = {2, 2 * b * b, 3, 5}, u[4] = {2, 2, 3 * b, 5 * b};
                            memcpy(in_s, t, sizeof t);
                            memcpy(out_s, u, sizeof u);
                        } else {
                            const uint32_t t[4] = {2, 3, 2 * b, 3 * b}, u[4] = {2, 3 * b * b, 2, 3};
                            memcpy(in_s, t, sizeof t);
                            memcpy(out_s, u, sizeof u);
                        }
                        ds_descs c;
                        ds_describe(&c, d2s, width_types[wi], in_s, out_s, layout, b, order);
                        /* The device's default chunk (Oclgrind says CPU: 512 bytes'
                         * worth, whole rows here); then 1 position per work-item (the
                         * GPU default) and 3 (several chunks a row, the last partial). */
                        const unsigned chunks[3] = {0, 1, 3};
                        for (int ci = 0; ci < (forced_chunks ? 3 : 1); ci++) {
                            char label[128];
                            snprintf(label, sizeof label, "%s %zu-byte %s b%u %s chunk %u",
                                     d2s ? "DepthToSpace" : "SpaceToDepth", clops_data_type_size(width_types[wi]),
                                     order ? "CRD" : "DCR", b, layout_names[layout], chunks[ci]);
                            run_case(label, &c.desc, &c.in, NULL, &c.out, NULL, CLOPS_SUCCESS, chunks[ci], 0);
                        }
                    }
}

/* The explicit-vector loop (kernels/depth_space.cl, VEC) for blocks 2, 3, 4, 8
 * and the general loop for block 5, on rows of 70 positions (a 64-byte vector
 * step of 1-byte elements and remainders), packed and padded, with the vector
 * loop forced and pieces of 67 positions, so the second piece of a row starts
 * unaligned; then the local-memory tile (TILE) forced on the same shapes (a whole
 * tile of 64 and a partial one, barriers under the race detector). 16-byte
 * elements have no vector loop (they take the element loop). */
static void vector_cases(int quick)
{
    static const uint32_t vblocks[5] = {2, 3, 4, 8, 5};
    for (int op = 0; op < 2; op++)
        for (int wi = 0; wi < 4; wi++)
            for (int order = 0; order < 2; order++)
                for (int bi = 0; bi < 5; bi++)
                    for (int layout = 0; layout < NUM_LAYOUTS; layout += 2) { /* packed, padded */
                        if (quick && layout != LAYOUT_PACKED)
                            continue;
                        const uint32_t b = vblocks[bi];
                        const uint32_t deep[4] = {1, b * b, 1, 70}, wide[4] = {1, 1, b, 70 * b};
                        const uint32_t *in_s = op == 0 ? deep : wide, *out_s = op == 0 ? wide : deep;
                        ds_descs c;
                        ds_describe(&c, op == 0, width_types[wi], in_s, out_s, layout, b, order);
                        for (int loop = 2; loop <= 3; loop++) {
                            char label[128];
                            snprintf(label, sizeof label, "%s %zu-byte %s b%u %s %s",
                                     op == 0 ? "DepthToSpace" : "SpaceToDepth", clops_data_type_size(width_types[wi]),
                                     order ? "CRD" : "DCR", b, layout_names[layout],
                                     loop == 2 ? "vectors chunk 67" : "tile");
                            run_case(label, &c.desc, &c.in, NULL, &c.out, NULL, CLOPS_SUCCESS, forced_chunks ? 67 : 0, loop);
                        }
                    }
}

static void unpool_cases(void)
{
    static const clops_data_type itypes[3] = {CLOPS_DATA_TYPE_UINT32, CLOPS_DATA_TYPE_UINT64, CLOPS_DATA_TYPE_INT64};
    static const char *const inames[3] = {"UINT32", "UINT64", "INT64"};
    for (int it = 0; it < 3; it++)
        for (int strided = 0; strided < 2; strided++)
            for (int kind = 0; kind < 3; kind++) { /* plain, conflicting duplicates, one out of range */
                const size_t isz = it == 0 ? 4 : 8;
                uint64_t out_st[4] = {100, 48, 7, 1};
                clops_tensor_desc in = {CLOPS_DATA_TYPE_FLOAT32, {1, 2, 3, 3}, NULL};
                clops_tensor_desc idx = {itypes[it], {1, 2, 3, 3}, NULL};
                clops_tensor_desc out = {CLOPS_DATA_TYPE_FLOAT32, {1, 2, 6, 6}, strided ? out_st : NULL};
                uint8_t idx_data[18 * 8];
                for (int k = 0; k < 18; k++) {
                    uint64_t v = (uint64_t)(k / 9) * 36 + (uint64_t)(k % 9) * 4 + 1;
                    /* Same target as element 0 of the channel, from the same row
                     * and from the next (the serial plan: one work-item writes
                     * them in input order). */
                    if (kind == 1 && (k % 9 == 1 || k % 9 == 3))
                        v = (uint64_t)(k / 9) * 36 + 1;
                    if (kind == 2 && k == 5)
                        v = it == 2 ? (uint64_t)-3 : 72; /* negative, or one past the output */
                    memcpy(idx_data + k * isz, &v, isz);
                }
                clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
                clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
                char label[128];
                snprintf(label, sizeof label, "MaxUnpooling %s %s %s", inames[it], strided ? "strided" : "packed",
                         kind == 0 ? "plain" : kind == 1 ? "duplicates" : "out of range");
                run_case(label, &desc, &in, &idx, &out, idx_data,
                         kind == 2 ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS, 0, 0);
            }
}

/* Input rows of unpool_plan_cases: 48 (4,800 inputs, past the serial plan's 4,096), or 4 (400
 * inputs) where the device profile lowers that limit below 400 (serial=N, lib/cl/profile.c), as
 * oclgrind.sh does for the GPU profiles: there Oclgrind simulates the rounded-up work-groups and
 * local-memory tiles item by item, and 48 rows took about 30 s a case. */
static uint32_t plan_rows(void)
{
    const char *profile = getenv("CLOPS_TEST_DEVICE_PROFILE");
    const char *serial = profile ? strstr(profile, "serial=") : NULL;
    return serial && strtoul(serial + 7, NULL, 10) < 400 ? 4 : 48;
}

/* MaxUnpooling past the serial plan (input > 4096 elements, or serial=N): the windows plan
 * (its vector form for KW = 2 with packed tensors, a chunk of 40 leaving a
 * tail after the vector steps) with indices in their windows, one outside (the
 * gated pool, bucket and tiles run), duplicates across windows (bucket and tiles
 * write them: one work-item per output tile, no race) and one out of range; the
 * general plan (output W not a multiple) with duplicates; and
 * the pool plan alone (output H not a multiple, pool's vector form for 1-byte
 * elements) with indices in their cells. */
static void unpool_plan_cases(void)
{
    static const int widths[3] = {0, 2, 4}; /* width_types: 1, 4, 16 bytes */
    static const char *const kinds[4] = {"in windows", "one outside", "duplicates", "out of range"};
    enum { N = 1, C = 2, MAX_H = 48, W = 50 };
    static uint64_t idx_data[N * C * MAX_H * W];
    const uint32_t H = plan_rows(), COUNT = N * C * H * W;
    for (int wi = 0; wi < 3; wi++)
        for (int it = 0; it < 2; it++) /* UINT32, INT64 */
            for (int kind = 0; kind < 6; kind++) {
                const int general = kind == 4, pool = kind == 5; /* pool: output H not a multiple */
                const uint32_t ow = general ? 2 * W + 1 : 2 * W, oh = pool ? 2 * H + 1 : 2 * H;
                const clops_data_type t = width_types[widths[wi]];
                clops_tensor_desc in = {t, {N, C, H, W}, NULL};
                clops_tensor_desc idx = {it ? CLOPS_DATA_TYPE_INT64 : CLOPS_DATA_TYPE_UINT32, {N, C, H, W}, NULL};
                clops_tensor_desc out = {t, {N, C, oh, ow}, NULL};
                for (uint64_t k = 0; k < COUNT; k++) {
                    /* In window k, or where the index one row up points (another
                     * work-item's row). */
                    const uint64_t j = (kind == 2 || general) && k % 3 == 1 && k >= W ? k - W : k;
                    const uint64_t w = j % W, h = j / W % H, nc = j / W / H;
                    uint64_t v = (nc * oh + 2 * h + (j >> 1 & 1)) * ow + 2 * w + (j & 1);
                    if ((kind == 1 && k == COUNT / 2) || (kind == 3 && k == COUNT - 7))
                        v = kind == 1 ? v + ow * 2 : (uint64_t)N * C * oh * ow;
                    if (it == 0) ((uint32_t *)(void *)idx_data)[k] = (uint32_t)v;
                    else idx_data[k] = v;
                }
                clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
                clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
                char label[128];
                snprintf(label, sizeof label, "MaxUnpooling %zu-byte %s %s plan %s", clops_data_type_size(t),
                         it ? "INT64" : "UINT32", general ? "general" : pool ? "pool" : "windows",
                         general ? "duplicates" : pool ? "in cells" : kinds[kind]);
                want_live = kind == 0 ? "windows" : NULL; /* every index in its window */
                run_case(label, &desc, &in, &idx, &out, idx_data,
                         kind == 3 ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS, 40, 0);
                want_live = NULL;
            }
}

/* Rows longer than the CPU-type default chunk (512 bytes' worth), so a row is
 * walked by two work-items and the second stops at the row's end. */
static void long_row_cases(void)
{
    for (int wi = 0; wi < 3; wi += 2) { /* uint8 and float32 */
        const clops_data_type t = width_types[wi];
        clops_tensor_desc in = {t, {1, 4, 2, 600}, NULL}, out = {t, {1, 1, 4, 1200}, NULL};
        clops_depth_to_space_desc d = {&in, &out, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
        clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &d};
        char label[96];
        snprintf(label, sizeof label, "DepthToSpace %zu-byte rows of 600", clops_data_type_size(t));
        run_case(label, &desc, &in, NULL, &out, NULL, CLOPS_SUCCESS, 0, 0);
        clops_space_to_depth_desc s2d = {&out, &in, 2, CLOPS_ORDER_COLUMN_ROW_DEPTH};
        clops_operator_desc desc2 = {CLOPS_OPERATOR_SPACE_TO_DEPTH, &s2d};
        snprintf(label, sizeof label, "SpaceToDepth %zu-byte rows of 1200", clops_data_type_size(t));
        run_case(label, &desc2, &out, NULL, &in, NULL, CLOPS_SUCCESS, 0, 0);
    }
    clops_tensor_desc in = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, 2, 600}, NULL};
    clops_tensor_desc idx = {CLOPS_DATA_TYPE_UINT32, {1, 1, 2, 600}, NULL};
    clops_tensor_desc out = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, 4, 1200}, NULL};
    static uint32_t idx_data[1200];
    for (uint32_t k = 0; k < 1200; k++)
        idx_data[k] = (k * 7) % 4800;
    clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
    clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
    run_case("MaxUnpooling UINT32 packed rows of 600", &desc, &in, &idx, &out, idx_data, CLOPS_SUCCESS, 0, 0);
}

/* 40,000 inputs naming 3 output elements: under a loop limit (the integrated-GPU
 * profile, llvmpipe) a crowded tile that tiles hands to mark and place
 * (max_unpooling.cl ST_HEAVY); on a GPU profile mark and place alone; else
 * bucket and tiles. */
static void crowded_case(void)
{
    enum { N = 40000 };
    clops_tensor_desc in = {CLOPS_DATA_TYPE_UINT16, {1, 1, 1, N}, NULL};
    clops_tensor_desc idx = {CLOPS_DATA_TYPE_UINT32, {1, 1, 1, N}, NULL};
    clops_tensor_desc out = {CLOPS_DATA_TYPE_UINT16, {1, 1, 1, 204001}, NULL};
    static uint32_t idx_data[N];
    for (uint32_t k = 0; k < N; k++)
        idx_data[k] = k % 3;
    clops_max_unpooling_desc mu = {&in, &idx, &out, CLOPS_INDICES_FLAT};
    clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
    run_case("MaxUnpooling UINT16 crowded tile", &desc, &in, &idx, &out, idx_data, CLOPS_SUCCESS, 0, 0);
}

int main(void)
{
    clops_status st = clops_context_create(&ctx);
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "clops_context_create: %s (%s)\n", clops_status_name(st), clops_last_error_message());
        return 1;
    }
    if (clops_context_backend(ctx) != CLOPS_BACKEND_OPENCL) {
        fprintf(stderr, "SKIP: no OpenCL device\n");
        clops_context_free(ctx);
        return 77;
    }
    const char *q = getenv("CLOPS_OCLGRIND_QUICK"), *v = getenv("CLOPS_OCLGRIND_VERBOSE");
    verbose = v && strcmp(v, "1") == 0;
    only = getenv("CLOPS_OCLGRIND_ONLY");
    keep = getenv("CLOPS_OCLGRIND_KEEP");
    skip = getenv("CLOPS_OCLGRIND_SKIP");
    const char *share = getenv("CLOPS_OCLGRIND_SHARE");
    if (share && *share) {
        char end;
        if (sscanf(share, "%u/%u%c", &share_k, &share_n, &end) != 2 || share_n == 0 || share_k >= share_n) {
            fprintf(stderr, "oclgrind_driver: CLOPS_OCLGRIND_SHARE=%s: expected K/N with 0 <= K < N\n", share);
            clops_context_free(ctx);
            return 2;
        }
        fprintf(stderr, "oclgrind_driver: share %u/%u: the cases whose label hashes to %u modulo %u\n", share_k, share_n,
                share_k, share_n);
    }
    fprintf(stderr, "oclgrind_driver: device \"%s\"\n", clops_context_device_name(ctx));
    depth_space_cases(q && strcmp(q, "1") == 0);
    vector_cases(q && strcmp(q, "1") == 0);
    unpool_cases();
    unpool_plan_cases();
    long_row_cases();
    unshared = 1;
    crowded_case();
    clops_context_free(ctx);
    fprintf(stderr, "oclgrind_driver: %d cases, %d executions, %d failures\n", cases, launches, failures);
    return failures ? 1 : 0;
}
