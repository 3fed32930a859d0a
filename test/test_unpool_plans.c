/*
 * test_unpool_plans.c - MaxUnpooling's OpenCL plans (lib/max_unpooling.c) on
 * tensors large enough to leave the serial plan (more than 4096 elements):
 *   windows  output H, W multiples of the input's: every index inside its own
 *            window (on each window border), one outside, one out of range;
 *   pool     H or W not a multiple (test_unpool_pools covers it on real pools);
 *   general  output smaller than the input, duplicates with different values;
 *            also the windows plan across the wrap of the status words' generations;
 *   serial   a small input (one work-item scatters in order), alone or after clear,
 *            and the test profiles' serial=N that lowers its limit;
 * and the asynchronous status: clops_operator_execute returns at once (also
 * behind an unsignalled user event) and clops_operator_last_status reports bad
 * indices. Every result is compared bit for bit with the naive reference on
 * every path (test_unpool_common.h).
 */
#define _XOPEN_SOURCE 700 /* strdup, setenv (test_fs.h) */
#include "test_unpool_common.h"

#include "api/introspect.h" /* test_profile_serial_limit: which kernels ran */
#include "ops/ops.h"         /* test_generation_wrap sets an operator's generation */
#include "test_fs.h"         /* tc_set_env */

/* Input {2, 3, 24, 40} (5760 elements) into windows of KH x KW = 2 x 3. */
#define IN_N 2
#define IN_C 3
#define IN_H 24
#define IN_W 40
#define KH 2
#define KW 3
#define IN_COUNT (IN_N * IN_C * IN_H * IN_W)

static const clops_data_type plan_types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32,
                                             CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_COMPLEX128};
#define NUM_PLAN_TYPES (sizeof plan_types / sizeof plan_types[0])

/* Shapes of the window tests: input {IN_N, IN_C, IN_H, w} into windows of
 * kh x kw. KW = 2 takes the vector form of the windows kernel (packed tensors);
 * w = 43 leaves a tail after its 8-position steps (on GPUs, after its 2, 4 or 8
 * positions per work-item: max_unpooling.cl WV), w = 64 none. */
typedef struct win_shape {
    uint64_t w, kh, kw;
} win_shape;
static const win_shape win_shapes[] = {{IN_W, KH, KW}, {43, 3, 2}, {64, 2, 2}};
#define NUM_WIN_SHAPES (sizeof win_shapes / sizeof win_shapes[0])

static uint64_t shape_count(const win_shape *s)
{
    return (uint64_t)IN_N * IN_C * IN_H * s->w;
}

/* The flat output index of window (n, c, h, w)'s element (r, q) in an output of
 * width `ow` and height `oh`. */
static uint64_t window_flat(const win_shape *s, uint64_t oh, uint64_t ow, uint64_t k, uint64_t r, uint64_t q)
{
    const uint64_t w = k % s->w, h = k / s->w % IN_H, nc = k / s->w / IN_H;
    return (nc * oh + h * s->kh + r) * ow + w * s->kw + q;
}

/* Indices that each point at a border of their window: the four corners and the
 * middles of the four sides, in turn. */
static void border_indices(const win_shape *s, uint64_t oh, uint64_t ow, uint64_t *flat)
{
    const uint64_t rq[8][2] = {{0, 0}, {0, s->kw - 1}, {s->kh - 1, 0}, {s->kh - 1, s->kw - 1},
                               {0, 1}, {s->kh - 1, 1}, {1, 0},         {1, s->kw - 1}};
    for (uint64_t k = 0; k < shape_count(s); k++)
        flat[k] = window_flat(s, oh, ow, k, rq[k % 8][0], rq[k % 8][1]);
}

/* Which kernel the device plan starts with ("" on the host backend). */
static const char *plan_of(const clops_operator_desc *desc)
{
    if (!tc_dev_ctx)
        return "";
    clops_operator *op = tc_create(tc_dev_ctx, desc, "plan", "device");
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    const char *name = info.backend == CLOPS_BACKEND_OPENCL ? info.kernel_name : "";
    clops_operator_free(op); /* kernel_name is a string literal of the plan */
    return name;
}

static void expect_plan(const up_case *c, const char *want, const char *what)
{
    up_descs d;
    up_describe(c, &d);
    const char *got = plan_of(&d.desc);
    if (got[0])
        ck_assert_msg(strcmp(got, want) == 0, "%s: device plan starts with %s, want %s", what, got, want);
}

/* Indices all in their windows, on the device: two checks on one operator.
 * - On a device clops plans for as other than a CPU, a packed KW = 2 windows plan
 *   takes the kernel's vector form (-DWV=n, n > 0) for elements of up to 8 bytes
 *   (8 with 64-bit integers), so that its lanes are what the window tests check:
 *   8-byte ones were left out for a while after Mesa 22.3's rusticl gave 0 for
 *   every value (max_unpooling.cl WV_IS).
 * - The windows kernel alone does the work (no hand-off to pool or the general
 *   path, which give the same bits at the cost of another pass: Oclgrind's
 *   min(ulongN, ulong) once made every 8-byte index look outside its window).
 * The output is checked by up_run; here only the plan and which launches did the work. */
static void expect_windows_alone(const up_case *c, uint64_t kw, const void *x, const void *idx)
{
    if (!tc_dev_ctx)
        return;
    up_descs d;
    up_describe(c, &d);
    clops_operator *op = tc_create(tc_dev_ctx, &d.desc, "windows alone", "device");
    if (!(tc_dev_ctx->info.type & CL_DEVICE_TYPE_CPU) && kw == 2) {
        const size_t es = tc_type(c->type)->size;
        const bool want = es <= 4 || (es == 8 && tc_dev_ctx->info.has_int64);
        clops_operator_info info;
        ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
        const char *wv = strstr(info.build_options, "-DWV=");
        ck_assert_msg(wv && (atoi(wv + 5) > 0) == want, "%s elements, KW = 2: build options \"%s\", want %s",
                      tc_type(c->type)->name, info.build_options, want ? "-DWV=n, n > 0" : "-DWV=0");
    }
    const size_t xb = tc_tensor_bytes(&d.x), ib = tc_tensor_bytes(&d.i), yb = tc_tensor_bytes(&d.y);
    void *y = tc_malloc(yb);
    const clops_host_buffers hb = {x, xb, idx, ib, y, yb};
    ck_assert_msg(clops_operator_execute_host(op, &hb) == CLOPS_SUCCESS, "windows alone: %s", clops_last_error_message());
    clops_launched l;
    ck_assert_int_eq(clops_introspect_launches(op, &l), CLOPS_SUCCESS);
    for (unsigned i = 0; i < l.count; i++)
        ck_assert_msg(l.live[i] == (strcmp(l.kernel[i], "windows") == 0), "%s elements, %s indices: kernel %s %s",
                      tc_type(c->type)->name, c->it->name, l.kernel[i], l.live[i] ? "did work" : "did none");
    free(y);
    clops_operator_free(op);
}

/* ---- the window test at its edges ----------------------------------------------------------------- */
START_TEST(test_windows_edges)
{
    const clops_data_type t = plan_types[_i % NUM_PLAN_TYPES];
    const index_type_info *it = &index_types[_i / NUM_PLAN_TYPES % 3];
    const win_shape *ws = &win_shapes[_i / NUM_PLAN_TYPES / 3];
    const uint64_t count = shape_count(ws), kh = ws->kh, kw = ws->kw;
    const size_t es = tc_type(t)->size;
    unsigned char *x = tc_malloc(count * es), *idx = tc_malloc(count * it->size);
    uint64_t *flat = tc_malloc(count * sizeof *flat);
    tc_fill_random(x, count * es, 17u + (uint64_t)_i);
    const uint64_t oh = IN_H * kh, ow = ws->w * kw, out_count = (uint64_t)IN_N * IN_C * oh * ow;
    up_case c = {t, it, {IN_N, IN_C, IN_H, (uint32_t)ws->w}, NULL, NULL, {IN_N, IN_C, (uint32_t)oh, (uint32_t)ow},
                 NULL, 5};

    border_indices(ws, oh, ow, flat);
    store_indices(it, flat, count, idx);
    expect_plan(&c, "windows", "border indices");
    up_run(&c, x, idx, CLOPS_SUCCESS, "every index on a border of its window");
    expect_windows_alone(&c, kw, x, idx);
    const uint64_t padded[4] = {IN_C * (oh * (ow + 5) + 2) + 1, oh * (ow + 5) + 2, ow + 5, 1};
    c.out_strides = padded;
    up_run(&c, x, idx, CLOPS_SUCCESS, "every index on a border of its window, padded output");
    c.out_strides = NULL;

    /* One index just outside its window, in each direction, at the tensor's first,
     * a middle and last element: the general path must give the same bits. */
    const struct {
        uint64_t k;
        int64_t dr, dq; /* output rows and columns from the window's top-left corner */
        const char *what;
    } outside[] = {
        {0, 0, (int64_t)kw, "first element's index one column right of its window"},
        {IN_W + 5, (int64_t)kh, 0, "index one row below its window"},
        {IN_W * 3 + 7, -1, 0, "index one row above its window"},
        {IN_W * 2 + 9, 0, -1, "index one column left of its window"},
        {count - 1, -(int64_t)kh * 5, 0, "last element's index five windows up"},
    };
    for (size_t o = 0; o < sizeof outside / sizeof outside[0]; o++) {
        border_indices(ws, oh, ow, flat);
        const uint64_t k = outside[o].k;
        flat[k] = (uint64_t)((int64_t)window_flat(ws, oh, ow, k, 0, 0) + outside[o].dr * (int64_t)ow + outside[o].dq);
        store_indices(it, flat, count, idx);
        up_run(&c, x, idx, CLOPS_SUCCESS, outside[o].what);
    }

    /* Out of range in the windows plan: reported, every other element written. */
    border_indices(ws, oh, ow, flat);
    flat[count / 2] = out_count;
    store_indices(it, flat, count, idx);
    up_run(&c, x, idx, CLOPS_ERROR_INDEX_OUT_OF_RANGE, "one index == the output count");

    /* H or W not a multiple of the input's: the general plan. */
    border_indices(ws, oh + 1, ow, flat);
    store_indices(it, flat, count, idx);
    up_case h1 = c;
    h1.out_sizes[2] = (uint32_t)oh + 1;
    expect_plan(&h1, "pool", "output H not a multiple (a pool's neighbourhoods)");
    up_run(&h1, x, idx, CLOPS_SUCCESS, "output H one more than a multiple");
    border_indices(ws, oh, ow + 1, flat);
    store_indices(it, flat, count, idx);
    up_case w1 = c;
    w1.out_sizes[3] = (uint32_t)ow + 1;
    expect_plan(&w1, "pool", "output W not a multiple (a pool's neighbourhoods)");
    up_run(&w1, x, idx, CLOPS_SUCCESS, "output W one more than a multiple");
    free(x);
    free(idx);
    free(flat);
}
END_TEST

/* ---- duplicates with different values, on the general paths ------------------------------------------- */
START_TEST(test_general_duplicates)
{
    const clops_data_type t = plan_types[_i % NUM_PLAN_TYPES];
    const index_type_info *it = &index_types[_i / NUM_PLAN_TYPES];
    const size_t es = tc_type(t)->size;
    unsigned char *x = tc_malloc(IN_COUNT * es), *idx = tc_malloc(IN_COUNT * it->size);
    uint64_t *flat = tc_malloc(IN_COUNT * sizeof *flat);
    tc_fill_random(x, IN_COUNT * es, 91u + (uint64_t)_i);
    uint64_t s = 5150u + (uint64_t)_i;

    /* 5760 inputs onto 600 outputs (not window-shaped): ~10 writers each. */
    for (uint64_t k = 0; k < IN_COUNT; k++)
        flat[k] = tc_rng_next(&s) % 600;
    store_indices(it, flat, IN_COUNT, idx);
    up_case g = {t, it, {IN_N, IN_C, IN_H, IN_W}, NULL, NULL, {IN_N, IN_C, 10, 10}, NULL, 4};
    expect_plan(&g, up_plan_name("bucket", es), "600 outputs");
    for (int run = 0; run < 3; run++)
        up_run(&g, x, idx, CLOPS_SUCCESS, "random duplicates, general plan");

    /* Window-shaped, but every third window points at its left neighbour's
     * chosen element: the window kernel hands over to the general path. */
    const uint64_t oh = IN_H * KH, ow = IN_W * KW;
    border_indices(&win_shapes[0], oh, ow, flat);
    for (uint64_t k = 1; k < IN_COUNT; k += 3)
        flat[k] = flat[k - 1];
    store_indices(it, flat, IN_COUNT, idx);
    up_case w = {t, it, {IN_N, IN_C, IN_H, IN_W}, NULL, NULL, {IN_N, IN_C, (uint32_t)oh, (uint32_t)ow}, NULL, 4};
    for (int run = 0; run < 3; run++)
        up_run(&w, x, idx, CLOPS_SUCCESS, "duplicates across windows, windows plan");
    free(x);
    free(idx);
    free(flat);
}
END_TEST

/* Each execution's status words carry a generation number; when it would wrap,
 * the words are zeroed first (max_unpooling.c enqueue_chain). Start a windows
 * and pool operator just below the wrap and run index sets in turn across it:
 * in their windows (windows alone), duplicates across windows (pool, then bucket
 * and tiles) and one out of range (reported): each result and status must be
 * this execution's, whatever the words held from before the wrap. */
START_TEST(test_generation_wrap)
{
    if (tc_skip_without_device("test_generation_wrap"))
        return;
    enum { OH = IN_H * KH, OW = IN_W * KW, OUT_COUNT = IN_N * IN_C * OH * OW };
    const uint32_t in[4] = {IN_N, IN_C, IN_H, IN_W}, out[4] = {IN_N, IN_C, OH, OW};
    clops_tensor_desc tx = {CLOPS_DATA_TYPE_UINT32, {IN_N, IN_C, IN_H, IN_W}, NULL};
    clops_tensor_desc ti = {CLOPS_DATA_TYPE_UINT32, {IN_N, IN_C, IN_H, IN_W}, NULL};
    clops_tensor_desc ty = {CLOPS_DATA_TYPE_UINT32, {IN_N, IN_C, OH, OW}, NULL};
    clops_max_unpooling_desc ud = {&tx, &ti, &ty, CLOPS_INDICES_FLAT};
    clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &ud};
    clops_operator *op = tc_create(tc_dev_ctx, &desc, "generation wrap", "device");
    static uint32_t x[IN_COUNT], idx[3][IN_COUNT], y[OUT_COUNT], want[OUT_COUNT];
    uint64_t flat[IN_COUNT];
    tc_fill_random(x, sizeof x, 4242u);
    border_indices(&win_shapes[0], OH, OW, flat);
    for (uint32_t k = 0; k < IN_COUNT; k++) {
        idx[0][k] = (uint32_t)flat[k];
        idx[1][k] = (uint32_t)(k % 3 == 1 ? flat[k - 1] : flat[k]);
        idx[2][k] = k == IN_COUNT / 2 ? OUT_COUNT : (uint32_t)flat[k];
    }
    static const int order[10] = {0, 1, 2, 1, 0, 1, 2, 0, 1, 1}; /* the wrap after the fourth */
    static const char *const what[3] = {"in windows", "duplicates across windows", "one out of range"};
    op->unpool.gen = UINT32_MAX - 4;
    for (int run = 0; run < 10; run++) {
        const int set = order[run];
        ref_tensor rx, ri, ry;
        memset(want, 0, sizeof want);
        ref_tensor_init(&rx, x, sizeof *x, in, NULL);
        ref_tensor_init(&ri, idx[set], sizeof *idx[set], in, NULL);
        ref_tensor_init(&ry, want, sizeof *want, out, NULL);
        ck_assert_int_eq(ref_max_unpooling(&rx, &ri, REF_INDEX_UINT32, &ry), set == 2);
        clops_host_buffers hb = {x, sizeof x, idx[set], sizeof idx[set], y, sizeof y};
        const clops_status st = clops_operator_execute_host(op, &hb);
        const clops_status want_st = set == 2 ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
        ck_assert_msg(st == want_st, "execution %d (%s) around the generation wrap: %s, want %s", run, what[set],
                      clops_status_name(st), clops_status_name(want_st));
        if (set != 2)
            tc_check_bytes(y, want, sizeof y, sizeof *y, what[set], "execute_host around the generation wrap");
    }
    ck_assert_msg(op->unpool.gen == 6, "generation %u after the wrap, want 6", (unsigned)op->unpool.gen);
    clops_operator_free(op);
}
END_TEST

/* ---- the asynchronous status ------------------------------------------------------------------------ */
typedef struct async_case {
    const char *what;
    uint32_t out_h, out_w;
    uint32_t in_h; /* input {1, 1, in_h, 64} */
} async_case;

static const async_case async_cases[] = {
    {"serial plan", 16, 16, 2},
    {"small input, clear then serial", 200, 128, 2},
    {"windows plan", 200, 128, 100},
    {"pool plan", 201, 128, 100},
    {"general plan", 60, 50, 100},
};

static cl_mem make_buffer(const void *data, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(clops_context_cl_context(tc_dev_ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                              (void *)data, &err);
    ck_assert_msg(m && err == CL_SUCCESS, "clCreateBuffer(%zu): %d", bytes, (int)err);
    return m;
}

/* Runs one case behind a user event that is completed only after execute
 * returned; `bad` >= 0 puts an out-of-range index there. Checks the output
 * against the reference and the status through clops_operator_last_status. */
static void run_behind_user_event(const async_case *a, long bad)
{
    const uint32_t in_w = 64, in_n = a->in_h * in_w, out_n = a->out_h * a->out_w;
    float *x = tc_malloc(in_n * sizeof *x), *y0 = tc_malloc(out_n * sizeof *y0), *want = tc_malloc(out_n * sizeof *want);
    uint32_t *idx = tc_malloc(in_n * sizeof *idx);
    for (uint32_t k = 0; k < in_n; k++) {
        x[k] = 1.0f + (float)k;
        const uint32_t h = k / in_w, w = k % in_w; /* 2x2 windows, bottom-right */
        idx[k] = (uint32_t)((h * 2 + 1) * a->out_w + w * 2 + 1) % out_n;
    }
    if (bad >= 0)
        idx[bad] = out_n + 7;
    tc_fill_sentinel(y0, out_n * sizeof *y0);
    const uint32_t xs[4] = {1, 1, a->in_h, in_w}, ys[4] = {1, 1, a->out_h, a->out_w};
    ref_tensor rx, ri, ry;
    memcpy(want, y0, out_n * sizeof *want);
    ref_tensor_init(&rx, x, 4, xs, NULL);
    ref_tensor_init(&ri, idx, 4, xs, NULL);
    ref_tensor_init(&ry, want, 4, ys, NULL);
    ck_assert_msg(ref_max_unpooling(&rx, &ri, REF_INDEX_UINT32, &ry) == (bad >= 0), "test bug");

    clops_tensor_desc tx = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, a->in_h, in_w}, NULL};
    clops_tensor_desc ti = {CLOPS_DATA_TYPE_UINT32, {1, 1, a->in_h, in_w}, NULL};
    clops_tensor_desc ty = {CLOPS_DATA_TYPE_FLOAT32, {1, 1, a->out_h, a->out_w}, NULL};
    clops_max_unpooling_desc ud = {&tx, &ti, &ty, CLOPS_INDICES_FLAT};
    clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &ud};
    clops_operator *op = tc_create(tc_dev_ctx, &desc, a->what, "device");
    ck_assert_msg(clops_operator_last_status(op) == CLOPS_SUCCESS, "%s: status before any execution", a->what);

    cl_mem bx = make_buffer(x, in_n * sizeof *x), bi = make_buffer(idx, in_n * sizeof *idx);
    cl_mem by = make_buffer(y0, out_n * sizeof *y0);
    cl_int err;
    cl_event gate = clCreateUserEvent(clops_context_cl_context(tc_dev_ctx), &err);
    ck_assert_msg(gate && err == CL_SUCCESS, "clCreateUserEvent: %d", (int)err);
    clops_buffers b = {bx, bi, by};
    cl_event done = NULL;
    clops_status st = clops_operator_execute(op, &b, 1, &gate, &done);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: execute behind a user event: %s (%s)", a->what, clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(done != NULL, "%s: no event", a->what);
    cl_int es = -1;
    ck_assert_int_eq(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL), CL_SUCCESS);
    ck_assert_msg(es != CL_COMPLETE, "%s: the returned event completed before the user event", a->what);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    st = clops_operator_last_status(op);
    const clops_status want_st = bad >= 0 ? CLOPS_ERROR_INDEX_OUT_OF_RANGE : CLOPS_SUCCESS;
    ck_assert_msg(st == want_st, "%s: last status %s, want %s", a->what, clops_status_name(st),
                  clops_status_name(want_st));
    if (bad >= 0)
        ck_assert_msg(strstr(clops_last_error_message(), "index") != NULL, "%s: message '%s'", a->what,
                      clops_last_error_message());
    float *got = tc_malloc(out_n * sizeof *got);
    ck_assert_int_eq(clEnqueueReadBuffer(clops_context_queue(tc_dev_ctx), by, CL_TRUE, 0, out_n * sizeof *got, got, 0,
                                         NULL, NULL), CL_SUCCESS);
    tc_check_bytes(got, want, out_n * sizeof *got, 4, "float32", a->what);
    /* The status belongs to the last execution: a good one after a bad one is clean. */
    if (bad >= 0) {
        idx[bad] = 0;
        ck_assert_int_eq(clEnqueueWriteBuffer(clops_context_queue(tc_dev_ctx), bi, CL_TRUE, 0, in_n * sizeof *idx, idx,
                                              0, NULL, NULL), CL_SUCCESS);
        st = clops_operator_execute(op, &b, 0, NULL, NULL);
        ck_assert_msg(st == CLOPS_SUCCESS, "%s: second execute %s", a->what, clops_status_name(st));
        st = clops_operator_last_status(op);
        ck_assert_msg(st == CLOPS_SUCCESS, "%s: status after good indices %s (%s)", a->what, clops_status_name(st),
                      clops_last_error_message());
    }
    free(got);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    tc_release_buffers(bx, bi, by);
    clops_operator_free(op);
    free(x);
    free(y0);
    free(want);
    free(idx);
}

START_TEST(test_behind_user_event)
{
    if (tc_skip_without_device("test_behind_user_event"))
        return;
    const async_case *a = &async_cases[_i];
    run_behind_user_event(a, -1);
    run_behind_user_event(a, 0);
    run_behind_user_event(a, (long)a->in_h * 64 - 1);
}
END_TEST

/* The test profiles' serial=N (lib/cl/profile.c; tools/scripts/oclgrind.sh lowers the limit so that
 * Oclgrind reaches every plan on small inputs): 2x2 windows of 400 inputs take the serial plan alone
 * by default and the windows plan under serial=256, with the same bits either way; serial=0 is
 * refused. */
START_TEST(test_profile_serial_limit)
{
    if (tc_skip_without_device("test_profile_serial_limit"))
        return;
    enum { H = 10, W = 20, IN = 2 * H * W, OUT = 4 * IN };
    uint32_t idx[IN];
    float x[IN], want[OUT] = {0}, got[OUT];
    for (uint32_t k = 0; k < IN; k++) { /* element k in its own window, at a corner that varies */
        const uint32_t w = k % W, h = k / W % H, c = k / W / H;
        idx[k] = (c * 2 * H + 2 * h + (k >> 1 & 1)) * 2 * W + 2 * w + (k & 1);
        x[k] = (float)k + 0.5f;
        want[idx[k]] = x[k];
    }
    clops_tensor_desc in = {CLOPS_DATA_TYPE_FLOAT32, {1, 2, H, W}, NULL};
    clops_tensor_desc ind = {CLOPS_DATA_TYPE_UINT32, {1, 2, H, W}, NULL};
    clops_tensor_desc out = {CLOPS_DATA_TYPE_FLOAT32, {1, 2, 2 * H, 2 * W}, NULL};
    clops_max_unpooling_desc mu = {&in, &ind, &out, CLOPS_INDICES_FLAT};
    const clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &mu};
    const char *saved = getenv("CLOPS_TEST_DEVICE_PROFILE");
    char *saved_copy = saved ? strdup(saved) : NULL;
    static const char *const profiles[3] = {"gpu", "gpu,serial=256", "gpu,serial=0"};
    for (int p = 0; p < 3; p++) {
        tc_set_env("CLOPS_TEST_DEVICE_PROFILE", profiles[p]);
        clops_context *ctx = NULL;
        const clops_status st = tc_context_create_test_device(&ctx);
        if (p == 2) {
            ck_assert_msg(st == CLOPS_ERROR_INVALID_SETTING, "profile %s: context creation gave %s", profiles[p],
                          clops_status_name(st));
            break;
        }
        ck_assert_msg(st == CLOPS_SUCCESS, "profile %s: %s", profiles[p], clops_last_error_message());
        clops_operator *op = NULL;
        ck_assert_msg(clops_operator_create(ctx, &desc, &op) == CLOPS_SUCCESS, "profile %s: %s", profiles[p],
                      clops_last_error_message());
        memset(got, 0xA5, sizeof got);
        const clops_host_buffers hb = {x, sizeof x, idx, sizeof idx, got, sizeof got};
        ck_assert_int_eq(clops_operator_execute_host(op, &hb), CLOPS_SUCCESS);
        ck_assert_msg(memcmp(got, want, sizeof want) == 0, "profile %s: wrong output", profiles[p]);
        clops_launched l;
        ck_assert_int_eq(clops_introspect_launches(op, &l), CLOPS_SUCCESS);
        int serial = 0, windows = 0;
        for (unsigned i = 0; i < l.count; i++) {
            serial |= strcmp(l.kernel[i], "serial") == 0;
            windows |= strcmp(l.kernel[i], "windows") == 0;
        }
        ck_assert_msg(p == 0 ? serial && !windows : windows && !serial, "profile %s: %u launches, serial %d, windows %d",
                      profiles[p], l.count, serial, windows);
        clops_operator_free(op);
        clops_context_free(ctx);
    }
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", saved_copy);
    free(saved_copy);
}
END_TEST

static Suite *plans_suite(void)
{
    Suite *s = suite_create("unpool_plans");
    TCase *tc = tc_suite_case(s, "windows", -1);
    tcase_add_loop_test(tc, test_windows_edges, 0, (int)(NUM_PLAN_TYPES * 3 * NUM_WIN_SHAPES));
    tc = tc_suite_case(s, "duplicates", -1);
    tcase_add_loop_test(tc, test_general_duplicates, 0, (int)(NUM_PLAN_TYPES * 3));
    tcase_add_test(tc, test_generation_wrap);
    tc = tc_suite_case(s, "async_status", -1);
    tcase_add_loop_test(tc, test_behind_user_event, 0, (int)(sizeof async_cases / sizeof async_cases[0]));
    tcase_add_test(tc, test_profile_serial_limit);
    return s;
}

int main(void)
{
    clops_unpool_planes = CLOPS_PLANES_NEVER; /* these plans on every device (test_unpool_pools runs planes) */
    return tc_main(plans_suite());
}
