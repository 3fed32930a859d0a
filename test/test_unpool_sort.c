/*
 * test_unpool_sort.c - MaxUnpooling's general path for 1- and 2-byte elements on
 * devices clops plans for as other than CPUs (max_unpooling_sort.cl: bin, then
 * settle; mark and place behind them for a crowded tile). Run under a device
 * profile (CLOPS_TEST_DEVICE_PROFILE=gpu,...) or on a GPU. Planned as a CPU (PoCL
 * without a profile) nothing takes bin and settle: the values are checked all the
 * same, but each of those tests then reports itself skipped (tc_skip), and an
 * entry of them alone exits 77, SKIPPED in ctest (only `listed` asserts there).
 * ctest runs each case as its own entry, natively (tier 2), and `alternating`
 * under a GPU profile in the first tier (test_unpool_sort_gpu:alternating); CI
 * runs them all under its GPU profiles (.ci/run).
 *   - which kernels did the work (clops_introspect_launches): bin and settle alone
 *     for scattered indices, mark and place alone for crowded ones;
 *   - scattered distinct indices, duplicates, out-of-range ones mixed in, per
 *     plane and flat, every index type, on a general shape whose last tile is
 *     partial and on a window-shaped one (windows and pool hand over);
 *   - one operator alternating crowded and scattered indices: bin's counters are
 *     zeroed by settle whichever path wrote the output (the path checked after
 *     every execution: a counter left over sends the next scattered one onto
 *     mark and place, whose output is right all the same);
 *   - the sizes networks use (8 and 16 million outputs); `network_sample`, two
 *     of them, is what CI runs under a GPU profile (.ci/run).
 * Every result is compared bit for bit with the reference (test_unpool_common.h).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#include <stdbool.h>

#include "api/introspect.h"
#include "test_unpool_common.h"

typedef enum pattern { DISTINCT, DUPLICATES, OUT_OF_RANGE, CROWDED } pattern;
static const char *const pattern_names[] = {"scattered distinct", "scattered with duplicates",
                                            "scattered with out-of-range ones", "crowded into 256 elements"};
static const clops_data_type types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16};

/* Flat (or per-plane, `plane` != 0: relative to the input's plane) indices of n
 * inputs into `out` outputs: distinct (k * step + 17 modulo the span, the step
 * coprime to it), random among every fifth element (duplicates all over the
 * span: as many per tile as distinct ones give, on average), random with every
 * 101st out of range, or all among the first 256 elements. */
static void make_indices(pattern pat, uint64_t n, uint64_t out, uint64_t plane, uint64_t seed, uint64_t *flat)
{
    const uint64_t span = plane ? plane : out;
    uint64_t step = 2654435761u % span, a = step, b = span;
    while (b) { /* step coprime to the span: distinct */
        const uint64_t r = a % b;
        a = b, b = r;
    }
    if (a != 1) step = 1;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t r = tc_rng_next(&seed);
        uint64_t v = pat == DISTINCT ? (k * step + 17) % span : pat == CROWDED ? r % 256 : r % (span / 5) * 5;
        if (pat == OUT_OF_RANGE) v = k % 101 == 50 ? span + r % 7 : r % span;
        flat[k] = v;
    }
}

/* Checks which launches of `op`'s last execution did the work: every kernel
 * named in `want` (space-separated) and no other. */
static void expect_launches(clops_operator *op, const char *want, const char *what)
{
    clops_launched l;
    ck_assert_int_eq(clops_introspect_launches(op, &l), CLOPS_SUCCESS);
    for (unsigned i = 0; i < l.count; i++) {
        char name[72];
        snprintf(name, sizeof name, " %s ", l.kernel[i]);
        char list[160];
        snprintf(list, sizeof list, " %s ", want);
        ck_assert_msg(l.live[i] == (strstr(list, name) != NULL), "%s: kernel %s %s, want work from: %s", what,
                      l.kernel[i], l.live[i] ? "did work" : "did none", want);
    }
}

/* Executes `op` once on the host buffers and checks which launches did the work. */
static void expect_work(clops_operator *op, const clops_host_buffers *hb, const char *want, const char *what)
{
    const clops_status st = clops_operator_execute_host(op, hb);
    ck_assert_msg(st == CLOPS_SUCCESS || st == CLOPS_ERROR_INDEX_OUT_OF_RANGE, "%s: %s", what, clops_last_error_message());
    expect_launches(op, want, what);
}

/* Whether the suites' device is planned for as a CPU (no bin and settle there). */
static bool planned_cpu(void)
{
    return !tc_dev_ctx || (tc_dev_ctx->info.type & CL_DEVICE_TYPE_CPU);
}

/* For a test of bin and settle, after its value checks: planned as a CPU, it
 * reached neither, and says it skipped (1: the caller returns). */
static int skip_on_cpu_plan(const char *test)
{
    if (!planned_cpu()) return 0;
    tc_skip(test, "the device is planned as a CPU, where nothing takes bin and settle (the values were checked; "
                  "run under CLOPS_TEST_DEVICE_PROFILE=gpu,... to test them)");
    return 1;
}

/* One case: every path against the reference, then (not on CPUs) one execution
 * of one operator whose launches must be `work`. */
static void run_case(clops_data_type t, const index_type_info *it, pattern pat, clops_indices_layout layout,
                     const uint32_t in[4], const uint32_t out[4], const char *work, uint64_t seed)
{
    const size_t es = tc_type(t)->size;
    const uint64_t n = (uint64_t)in[0] * in[1] * in[2] * in[3], nout = (uint64_t)out[0] * out[1] * out[2] * out[3];
    const uint64_t plane = layout == CLOPS_INDICES_PER_PLANE ? (uint64_t)out[2] * out[3] : 0;
    uint64_t *flat = tc_malloc(n * sizeof *flat);
    unsigned char *x = tc_malloc(n * es), *idx = tc_malloc(n * it->size);
    make_indices(pat, n, nout, plane, seed, flat);
    store_indices(it, flat, n, idx);
    tc_fill_random(x, n * es, seed + 1);
    up_case c = {t, it, {in[0], in[1], in[2], in[3]}, NULL, NULL, {out[0], out[1], out[2], out[3]}, NULL, 3};
    char what[96];
    snprintf(what, sizeof what, "%s indices", pattern_names[pat]);
    const clops_status want = pat == OUT_OF_RANGE ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
    if (layout == CLOPS_INDICES_FLAT) up_run(&c, x, idx, want, what);
    else up_run_layout(&c, layout, x, idx, want, what, NULL);
    if (!skip_on_cpu_plan(what)) {
        up_descs d;
        up_describe_layout(&c, layout, &d);
        clops_operator *op = tc_create(tc_dev_ctx, &d.desc, what, "device");
        const size_t yb = tc_tensor_bytes(&d.y);
        void *y = tc_malloc(yb);
        const clops_host_buffers hb = {x, n * es, idx, n * it->size, y, yb};
        snprintf(what, sizeof what, "%s %s, %s%s indices", tc_type(t)->name, pattern_names[pat],
                 plane ? "per-plane " : "", it->name);
        expect_work(op, &hb, work, what);
        free(y);
        clops_operator_free(op);
    }
    free(flat);
    free(x);
    free(idx);
}

/* A general shape (output 5.3x the input, not window-shaped) whose output ends
 * in a partial tile whatever the tile, and a window-shaped one. */
static const uint32_t gen_in[4] = {2, 3, 61, 77}, gen_out[4] = {2, 3, 143, 181};
static const uint32_t win_in[4] = {1, 4, 48, 64}, win_out[4] = {1, 4, 96, 128};

START_TEST(test_general)
{
    const clops_data_type t = types[_i % 2];
    const index_type_info *it = &index_types[_i / 2 % 3];
    const pattern pat = (pattern)(_i / 6 % 3);
    const clops_indices_layout layout = _i / 18 ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT;
    run_case(t, it, pat, layout, gen_in, gen_out, "bin settle", 900u + (uint64_t)_i);
}
END_TEST

START_TEST(test_window_shaped)
{
    const clops_data_type t = types[_i % 2];
    const index_type_info *it = &index_types[_i / 2 % 3];
    const pattern pat = (pattern)(_i / 6 % 2);
    /* windows and pool fail their checks and the general path rewrites everything */
    run_case(t, it, pat, CLOPS_INDICES_FLAT, win_in, win_out, "bin settle", 950u + (uint64_t)_i);
}
END_TEST

/* Crowded indices fill a tile past its slots: mark and place write the output. */
START_TEST(test_crowded)
{
    run_case(types[_i % 2], &index_types[_i / 2], CROWDED, _i % 2 ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT,
             gen_in, gen_out, "mark place", 980u + (uint64_t)_i);
}
END_TEST

/* One operator, 20 crowded executions, 20 scattered, then alternating: settle
 * zeroes bin's counters after either path, so each execution starts from zero
 * (a counter left over pushes a scattered execution onto mark and place, whose
 * output is right all the same). So the path that did the work is checked after
 * every execution, with its output: mark and place after a crowded one, bin and
 * settle after a scattered one (the second of two scattered ones in a row, and
 * one after a crowded one, are what a counter left over would move). */
START_TEST(test_alternating)
{
    if (tc_skip_without_device("test_alternating"))
        return;
    const clops_data_type t = types[_i];
    const size_t es = tc_type(t)->size;
    const uint64_t n = 2ull * 3 * 61 * 77, nout = 2ull * 3 * 143 * 181;
    uint64_t *flat = tc_malloc(n * sizeof *flat);
    unsigned char *x = tc_malloc(n * es), *idx[2], *want[2];
    tc_fill_random(x, n * es, 4801u);
    up_case c = {t, &index_types[0], {2, 3, 61, 77}, NULL, NULL, {2, 3, 143, 181}, NULL, 0};
    up_descs d;
    up_describe(&c, &d);
    const size_t yb = tc_tensor_bytes(&d.y);
    for (int k = 0; k < 2; k++) {
        make_indices(k ? DISTINCT : CROWDED, n, nout, 0, 4802u + (uint64_t)k, flat);
        idx[k] = tc_malloc(n * 4);
        store_indices(&index_types[0], flat, n, idx[k]);
        want[k] = tc_malloc(yb);
        memset(want[k], 0, yb);
        ck_assert_int_eq(up_reference(&c, CLOPS_INDICES_FLAT, x, idx[k], want[k]), 0);
    }
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "alternating", "device");
    const void *const xs[2] = {x, x}, *const idxs[2] = {idx[0], idx[1]};
    const unsigned char *const wants[2] = {want[0], want[1]};
    static const char *const names[2] = {"crowded", "scattered"};
    const bool sorts = !planned_cpu();
    unsigned char *got = tc_malloc(yb);
    for (int run = 0; run < 60; run++) {
        const int k = run < 20 ? 0 : run < 40 ? 1 : run % 2;
        const clops_host_buffers hb = {xs[k], n * es, idxs[k], n * 4, got, yb};
        tc_fill_sentinel(got, yb);
        const clops_status st = clops_operator_execute_host(op, &hb);
        char what[96];
        snprintf(what, sizeof what, "execution %d of one operator, %s indices", run, names[k]);
        ck_assert_msg(st == CLOPS_SUCCESS, "%s: %s (%s)", what, clops_status_name(st), clops_last_error_message());
        tc_check_bytes(got, wants[k], yb, es, what, "execute_host");
        if (sorts) expect_launches(op, k ? "bin settle" : "mark place", what);
    }
    free(got);
    clops_operator_free(op);
    for (int k = 0; k < 2; k++) {
        free(idx[k]);
        free(want[k]);
    }
    free(flat);
    free(x);
    skip_on_cpu_plan("test_alternating");
}
END_TEST

/* The sizes networks use: scattered indices with duplicates into 8 million
 * outputs on a general shape, and distinct ones into 16 million on a SegNet-like
 * window-shaped one (4, 64, 128, 128) -> (4, 64, 256, 256), flat and per plane. */
static void network_case(int i)
{
    static const uint32_t big_in[4] = {1, 16, 250, 500}, big_out[4] = {1, 16, 707, 707};
    static const uint32_t seg_in[4] = {4, 64, 128, 128}, seg_out[4] = {4, 64, 256, 256};
    const bool seg = i / 2 % 2;
    run_case(types[i % 2], &index_types[i / 4], seg ? DISTINCT : DUPLICATES,
             i % 3 ? CLOPS_INDICES_FLAT : CLOPS_INDICES_PER_PLANE, seg ? seg_in : big_in, seg ? seg_out : big_out,
             "bin settle", 990u + (uint64_t)i);
}

START_TEST(test_network)
{
    if (tc_skip_network_sizes("test_network"))
        return;
    network_case(_i);
}
END_TEST

/* Two of test_network's eight, between them both shapes, types, index types and
 * layouts: FLOAT16 with duplicates into the general shape's 8 million outputs,
 * flat UINT32 indices (1), and UINT8 into the SegNet-like 16 million, per-plane
 * UINT64 indices (6). CI runs this case under a GPU profile with CLOPS_TEST_NETWORK=1
 * (.ci/run; the whole of test_network there took 36 s at load 4). */
START_TEST(test_network_sample)
{
    if (tc_skip_network_sizes("test_network_sample"))
        return;
    static const int picked[2] = {1, 6};
    network_case(picked[_i]);
}
END_TEST

/* The listing (clops_operator_programs, what `clops kernels list` and AOT packs build) names the
 * bin-and-settle program an operator of another shape takes: a board without a compiler finds
 * it in its pack (on CPUs, where nothing takes bin and settle, it names none). */
typedef struct listing {
    char *text;
    size_t len;
} listing;

static void add_listed(void *user, const char *source, const char *options)
{
    listing *l = user;
    const size_t n = strlen(source) + strlen(options) + 3;
    l->text = realloc(l->text, l->len + n + 1);
    ck_assert_ptr_nonnull(l->text);
    l->len += (size_t)snprintf(l->text + l->len, n + 1, "%s %s\n", source, options);
}

START_TEST(test_listed)
{
    if (!tc_dev_ctx) return;
    up_case c = {CLOPS_DATA_TYPE_UINT8, &index_types[0], {gen_in[0], gen_in[1], gen_in[2], gen_in[3]}, NULL, NULL,
                 {gen_out[0], gen_out[1], gen_out[2], gen_out[3]}, NULL, 3};
    up_descs d;
    up_describe_layout(&c, CLOPS_INDICES_FLAT, &d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "listed", "device");
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    const bool sorts = strstr(info.build_options, "-DSORT=1") != NULL;
    ck_assert_msg(sorts == !planned_cpu(), "bin and settle %s on this device: %s", sorts ? "taken" : "not taken",
                  info.build_options);
    /* The pool tile (-DPOOL_TX/-DPOOL_TY, the last options) can shrink once the program is built:
     * rusticl's pool kernel in a -DSORT=1 program takes 32 work-items where the device says 1024,
     * and the operator then re-plans (max_unpooling.c group_limit), which no listing can know
     * beforehand. So the listed program must match up to the tile. */
    char want[600];
    snprintf(want, sizeof want, "max_unpooling.cl %s\n", info.build_options);
    char *tile = strstr(want, " -DPOOL_TX=");
    if (tile) *tile = '\0';
    /* another shape of the same types: a tiny one, whose own plan is serial */
    up_case small = {CLOPS_DATA_TYPE_UINT8, &index_types[0], {1, 1, 4, 4}, NULL, NULL, {1, 1, 8, 8}, NULL, 3};
    up_describe_layout(&small, CLOPS_INDICES_FLAT, &d);
    listing l = {calloc(1, 1), 0};
    ck_assert_int_eq(clops_operator_programs(tc_dev_ctx, &d.desc, add_listed, &l), CLOPS_SUCCESS);
    ck_assert_msg(strstr(l.text, want) != NULL, "the listing lacks the operator's program:\n%s", want);
    free(l.text);
    clops_operator_free(op);
}
END_TEST

/* Where bin's scratch and mark's words together pass the device's maximum allocation but mark's words
 * alone fit, the operator runs mark and place on the device (bin and settle left out), not on the host.
 * A GPU profile with alloc=BYTES (lib/cl/profile.c) makes such a device. */
START_TEST(test_scratch_past_alloc)
{
    const char *profile = getenv("CLOPS_TEST_DEVICE_PROFILE");
    if (planned_cpu() || !profile || !*profile) {
        tc_skip("scratch_past_alloc", "no GPU profile: nothing takes bin and settle here");
        return;
    }
    const uint64_t n = (uint64_t)gen_in[0] * gen_in[1] * gen_in[2] * gen_in[3];
    const uint64_t nout = (uint64_t)gen_out[0] * gen_out[1] * gen_out[2] * gen_out[3];
    const uint64_t mark_bytes = (nout + 3) / 4 * 16; /* one word per output (unpool_state.c) */
    char *saved = strdup(profile), with_alloc[256];
    snprintf(with_alloc, sizeof with_alloc, "%s,alloc=%llu", saved, (unsigned long long)(mark_bytes + 64));
    setenv("CLOPS_TEST_DEVICE_PROFILE", with_alloc, 1);
    clops_context *ctx = NULL;
    const clops_status made = tc_context_create_test_device(&ctx);
    setenv("CLOPS_TEST_DEVICE_PROFILE", saved, 1);
    free(saved);
    ck_assert_msg(made == CLOPS_SUCCESS, "context under %s: %s", with_alloc, clops_status_name(made));
    up_case c = {CLOPS_DATA_TYPE_UINT8, &index_types[0], {gen_in[0], gen_in[1], gen_in[2], gen_in[3]}, NULL, NULL,
                 {gen_out[0], gen_out[1], gen_out[2], gen_out[3]}, NULL, 3};
    up_descs d;
    up_describe_layout(&c, CLOPS_INDICES_FLAT, &d);
    clops_operator *op = NULL;
    ck_assert_int_eq(clops_operator_create(ctx, &d.desc, &op), CLOPS_SUCCESS);
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_msg(info.backend == CLOPS_BACKEND_OPENCL && strstr(info.build_options, "-DMARK=1") &&
                      strstr(info.build_options, "-DSORT=0"),
                  "under %s: backend %d, kernel %s, options %s, fallback: %s", with_alloc, (int)info.backend,
                  info.kernel_name, info.build_options, info.fallback_reason);
    uint64_t *flat = tc_malloc(n * sizeof *flat);
    unsigned char *x = tc_malloc(n), *idx = tc_malloc(n * index_types[0].size);
    unsigned char *got = tc_malloc(nout), *want = tc_malloc(nout), *init = tc_malloc(nout);
    make_indices(DISTINCT, n, nout, 0, 4711, flat);
    store_indices(&index_types[0], flat, n, idx);
    tc_fill_random(x, n, 4712);
    tc_fill_sentinel(init, nout);
    const tc_bufs b = {x, n, idx, n * index_types[0].size, init, nout};
    ck_assert_int_eq(tc_run_execute_host(op, &b, got), CLOPS_SUCCESS);
    ck_assert_int_eq(tc_run_host_run(&d.desc, &b, want), CLOPS_SUCCESS);
    tc_check_bytes(got, want, nout, 1, "scratch past the maximum allocation", "mark and place on the device");
    free(flat), free(x), free(idx), free(got), free(want), free(init);
    clops_operator_free(op);
    clops_context_free(ctx);
}
END_TEST

static Suite *sort_suite(void)
{
    Suite *s = suite_create("unpool_sort");
    TCase *tc = tc_suite_case(s, "general", -1);
    tcase_add_loop_test(tc, test_general, 0, 36);
    tc = tc_suite_case(s, "window_shaped", -1);
    tcase_add_loop_test(tc, test_window_shaped, 0, 12);
    tc = tc_suite_case(s, "crowded", -1);
    tcase_add_loop_test(tc, test_crowded, 0, 6);
    tc = tc_suite_case(s, "alternating", -1);
    tcase_add_loop_test(tc, test_alternating, 0, 2);
    tc = tc_suite_case(s, "listed", -1);
    tcase_add_test(tc, test_listed);
    tc = tc_suite_case(s, "scratch_past_alloc", -1);
    tcase_add_test(tc, test_scratch_past_alloc);
    tc = tc_suite_case(s, "network", -1);
    tcase_add_loop_test(tc, test_network, 0, 8);
    tc = tc_suite_case(s, "network_sample", -1);
    tcase_add_loop_test(tc, test_network_sample, 0, 2);
    return s;
}

int main(void)
{
    return tc_main(sort_suite());
}
