/*
 * test_cli_kernels.c - `clops kernels list` names every program the operators
 * build (issue 25, item 1): a spread of DepthToSpace, SpaceToDepth and
 * MaxUnpooling shapes (narrow and long rows, every chunk and vector variant the
 * rules choose, 64-bit offsets, layouts, plans, index types) is built on the
 * default device, and the program each operator uses (its source file and the
 * build options clops_operator_get_info reports) must be a line of the list.
 * `clops kernels build` (issue 33, item 6) builds a selection into an empty
 * cache: operators of that selection then load their programs from disk, and a
 * second build finds every program cached already.
 * Shared fixtures: cli_fixture.h.
 */
#define _XOPEN_SOURCE 700
#include "cli_fixture.h"

#include <clops/clops.h>
#include <dirent.h>
#include <sys/stat.h>

/* ---- the list, as the CLI prints it ---------------------------------------------------------- */

typedef struct listed {
    char **lines; /* "SOURCE OPTIONS" */
    size_t count;
} listed;

/* Runs `clops kernels list` with `ops`, `type` and `layouts` (a slice at a time:
 * the whole list is longer than the fixture captures) and --windows 5x5 (a
 * window past the pool's cells), and adds "source options" of every program
 * line to l. */
static void list_programs(listed *l, const char *ops, const char *type, const char *layouts)
{
    run("kernels", "list", "--ops", ops, "--types", type, "--layouts", layouts, "--windows", "5x5", NULL);
    ck_assert_msg(res.exit_code == 0, "kernels list: exit %d: %.400s", res.exit_code, res.err);
    ck_assert_uint_lt(strlen(res.out), CAPTURE_SIZE - 1);
    const size_t before = l->count;
    for (char *line = strtok(res.out, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        /* "SOURCE  HASH  OPTIONS" */
        char *hash = strstr(line, "  "), *options = hash ? strstr(hash + 2, "  ") : NULL;
        ck_assert_msg(options != NULL, "kernels list: odd line '%.400s'", line);
        const size_t n = (size_t)(hash - line) + 1 + strlen(options + 2) + 1;
        char *entry = malloc(n);
        ck_assert_ptr_nonnull(entry);
        snprintf(entry, n, "%.*s %s", (int)(hash - line), line, options + 2);
        l->lines = realloc(l->lines, (l->count + 1) * sizeof *l->lines);
        ck_assert_ptr_nonnull(l->lines);
        l->lines[l->count++] = entry;
    }
    ck_assert_uint_gt(l->count, before);
}

static int is_listed(const listed *l, const char *source, const char *options)
{
    char want[1024];
    snprintf(want, sizeof want, "%s %s", source, options);
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->lines[i], want) == 0) return 1;
    return 0;
}

static void free_listed(listed *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->lines[i]);
    free(l->lines);
}

/* ---- the spread ------------------------------------------------------------------------------ */

enum { PACKED, NHWC, STRIDED };

/* Strides of `sizes` in `layout` (NULL for packed). */
static const uint64_t *layout_strides(const uint32_t s[4], int layout, uint64_t st[4])
{
    if (layout == PACKED) return NULL;
    if (layout == STRIDED) { /* every element two apart */
        st[3] = 2, st[2] = 2 * (uint64_t)s[3], st[1] = st[2] * s[2], st[0] = st[1] * s[1];
        return st;
    }
    st[0] = (uint64_t)s[1] * s[2] * s[3], st[1] = 1, st[2] = (uint64_t)s[3] * s[1], st[3] = s[1];
    return st;
}

/* DepthToSpace/SpaceToDepth: the deep side {n, c*b*b, h, w}, the spatial side {n, c, h*b, w*b}. */
static const struct ds_case {
    int d2s;
    clops_data_type type;
    uint32_t b, n, c, h, w;
    int order, layout;
} ds_cases[] = {
    /* the two: float32 rows of 5000 (CHUNK=256u), float64 rows of 9000 (CHUNK=128u -DVEC=1) */
    {1, CLOPS_DATA_TYPE_FLOAT32, 2, 1, 4, 3, 5000, 0, PACKED},
    {1, CLOPS_DATA_TYPE_FLOAT64, 2, 1, 4, 3, 9000, 0, PACKED},
    {0, CLOPS_DATA_TYPE_FLOAT64, 2, 1, 4, 3, 9000, 1, PACKED},
    {1, CLOPS_DATA_TYPE_UINT8, 3, 1, 2, 4, 9000, 1, PACKED},
    {0, CLOPS_DATA_TYPE_UINT8, 4, 1, 1, 2, 8193, 0, PACKED},
    {1, CLOPS_DATA_TYPE_FLOAT16, 8, 1, 1, 2, 4097, 0, PACKED},
    {0, CLOPS_DATA_TYPE_INT32, 5, 2, 1, 3, 2049, 1, PACKED},
    {1, CLOPS_DATA_TYPE_COMPLEX128, 2, 1, 2, 2, 600, 0, PACKED},
    {1, CLOPS_DATA_TYPE_FLOAT32, 2, 2, 3, 5, 7, 0, PACKED},
    {0, CLOPS_DATA_TYPE_FLOAT32, 3, 1, 2, 4, 5, 1, PACKED},
    {1, CLOPS_DATA_TYPE_INT16, 2, 1, 8, 16, 3000, 0, NHWC},
    {0, CLOPS_DATA_TYPE_UINT64, 2, 1, 3, 4, 40, 1, NHWC},
    {1, CLOPS_DATA_TYPE_BOOL, 1, 1, 1, 1, 1, 0, PACKED},
    /* a uint8 output of 2^32 elements: 64-bit offsets, within PoCL's 4 GiB allocation */
    {1, CLOPS_DATA_TYPE_UINT8, 2, 1, 1, 32768, 32768, 0, PACKED},
};
#define DS_CASES (int)(sizeof ds_cases / sizeof ds_cases[0])

/* MaxUnpooling: input {n, c, h, w}, output {n, c, oh, ow}; the pools are named by
 * the max pool (kernel/stride, padding) whose output size and input size they
 * have. Every plan of lib/ops/max_unpooling.c: serial, general, windows (with
 * and without pool), pool of every stride in both forms. */
static const struct unpool_case {
    clops_data_type type, index_type;
    uint32_t n, c, h, w, oh, ow;
    int layout, out_packed, per_plane;
} unpool_cases[] = {
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_INT64, 1, 2, 3, 5, 6, 10, PACKED, 1, 0},       /* serial */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32, 1, 2, 3, 5, 70, 90, PACKED, 1, 0},       /* serial, large out */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT32, 1, 4, 64, 64, 128, 128, PACKED, 1, 0}, /* windows 2x2 */
    {CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_INT64, 2, 3, 40, 50, 120, 150, PACKED, 1, 0},  /* windows 3x3 */
    {CLOPS_DATA_TYPE_INT32, CLOPS_DATA_TYPE_UINT32, 1, 4, 40, 40, 200, 200, PACKED, 1, 0},   /* windows 5x5, no pool */
    {CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_UINT32, 1, 2, 64, 64, 64, 64, PACKED, 1, 0},   /* 3x3/1 pad 1: windows 1x1 */
    {CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_UINT64, 1, 2, 64, 64, 330, 330, PACKED, 1, 0}, /* general: step 5 */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT32, 1, 2, 64, 64, 50, 50, PACKED, 1, 0},   /* general: smaller out */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT32, 1, 2, 64, 64, 129, 129, PACKED, 1, 0}, /* 2x2/2 ceil: pool 2 */
    {CLOPS_DATA_TYPE_INT16, CLOPS_DATA_TYPE_UINT32, 1, 3, 57, 57, 113, 113, PACKED, 1, 0},   /* 3x3/2 pad 1, odd */
    {CLOPS_DATA_TYPE_INT16, CLOPS_DATA_TYPE_UINT32, 1, 3, 57, 57, 112, 112, PACKED, 1, 0},   /* 3x3/2 pad 1 ceil */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_INT64, 1, 3, 57, 57, 112, 112, PACKED, 1, 0},    /* scalar: 8-byte ind */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32, 1, 3, 57, 57, 112, 112, PACKED, 1, 0},   /* vector, 1-byte */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32, 1, 3, 57, 57, 113, 113, PACKED, 1, 0},   /* odd width: scalar */
    {CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_INT64, 1, 2, 64, 64, 129, 130, PACKED, 1, 0},  /* 2-byte, 8-byte ind */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_INT64, 1, 2, 62, 62, 64, 64, PACKED, 1, 0},    /* 3x3/1: pool 1 */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT32, 1, 8, 31, 31, 64, 64, PACKED, 1, 0},   /* 4x4/2 */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_INT64, 1, 8, 31, 31, 64, 64, PACKED, 1, 1},    /* 4x4/2 per plane */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32, 1, 16, 22, 22, 67, 67, PACKED, 1, 0},    /* 3x3/3 */
    {CLOPS_DATA_TYPE_INT32, CLOPS_DATA_TYPE_INT64, 1, 32, 16, 16, 65, 65, PACKED, 1, 0},     /* 4x4/4 ceil */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT32, 1, 4, 62, 22, 64, 67, PACKED, 1, 1},   /* 3x3 stride 1x3 */
    {CLOPS_DATA_TYPE_UINT64, CLOPS_DATA_TYPE_UINT32, 1, 2, 64, 64, 129, 129, PACKED, 1, 0},  /* 8-byte vector */
    {CLOPS_DATA_TYPE_COMPLEX128, CLOPS_DATA_TYPE_UINT32, 1, 2, 64, 64, 129, 129, PACKED, 1, 0}, /* 16-byte */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_UINT32, 1, 4, 64, 64, 128, 128, PACKED, 1, 1}, /* windows per plane */
    {CLOPS_DATA_TYPE_INT32, CLOPS_DATA_TYPE_UINT32, 1, 8, 32, 32, 64, 64, NHWC, 0, 0},       /* windows, NHWC */
    {CLOPS_DATA_TYPE_INT32, CLOPS_DATA_TYPE_UINT32, 1, 8, 32, 33, 64, 67, NHWC, 1, 0},       /* pool, NHWC in */
    {CLOPS_DATA_TYPE_INT32, CLOPS_DATA_TYPE_UINT32, 1, 8, 57, 57, 113, 113, NHWC, 0, 1},     /* pool, NHWC */
    {CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_INT64, 1, 2, 57, 57, 112, 112, STRIDED, 0, 0}, /* pool, strided */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32, 1, 2, 64, 64, 330, 330, STRIDED, 1, 0},  /* general, strided in */
    {CLOPS_DATA_TYPE_INT16, CLOPS_DATA_TYPE_INT64, 1, 2, 3, 5, 6, 10, STRIDED, 0, 1},        /* serial, strided */
    /* a uint8 output of 2^32 elements: 64-bit offsets, within PoCL's 4 GiB allocation */
    {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_UINT32, 1, 1, 2, 2, 65536, 65536, PACKED, 1, 0},
};
#define UNPOOL_CASES (int)(sizeof unpool_cases / sizeof unpool_cases[0])

/* Creates the operator, and checks that the program it built is listed. */
static void check_built(clops_context *ctx, const listed *l, const clops_operator_desc *desc, const char *label)
{
    clops_operator *op = NULL;
    const clops_status st = clops_operator_create(ctx, desc, &op);
    if (st == CLOPS_ERROR_TOO_LARGE_FOR_DEVICE) { /* a device with a smaller maximum allocation: nothing built */
        fprintf(stderr, "note: %s: too large for this device, nothing to check\n", label);
        return;
    }
    ck_assert_msg(st == CLOPS_SUCCESS, "%.400s: %.400s: %.400s", label, clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    if (info.backend != CLOPS_BACKEND_OPENCL) { /* the device cannot run it (no 64-bit integers, ...): nothing built */
        fprintf(stderr, "note: %s runs on the host here (%s), nothing to check\n", label, info.fallback_reason);
        clops_operator_free(op);
        return;
    }
    const char *source = desc->type == CLOPS_OPERATOR_MAX_UNPOOLING ? "max_unpooling.cl" : "depth_space.cl";
    ck_assert_msg(is_listed(l, source, info.build_options), "%.400s built %.400s with \"%.400s\", which 'clops kernels list' "
                  "does not name", label, source, info.build_options);
    clops_operator_free(op);
}

START_TEST(test_list_names_every_built_program)
{
    if (!have_device) {
        const char *req = getenv("CLOPS_REQUIRE_DEVICE");
        ck_assert_msg(!(req && strcmp(req, "1") == 0), "no OpenCL device (CLOPS_REQUIRE_DEVICE=1)");
        fprintf(stderr, "SKIP: test_list_names_every_built_program: no OpenCL device\n");
        return;
    }
    listed l = {NULL, 0};
    static const char *const types[] = {"FLOAT32", "FLOAT64", "FLOAT16", "UINT8", "INT32", "INT16",
                                        "UINT64", "COMPLEX128", "BOOL"};
    static const char *const layouts[] = {"packed", "nhwc", "strided"};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        list_programs(&l, "d2s,s2d", types[t], "all");
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
            list_programs(&l, "unpool", types[t], layouts[i]);
    }
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create(&ctx), CLOPS_SUCCESS);
    ck_assert_int_eq(clops_context_backend(ctx), CLOPS_BACKEND_OPENCL);
    char label[256];
    for (int i = 0; i < DS_CASES; i++) {
        const struct ds_case *k = &ds_cases[i];
        const uint32_t deep[4] = {k->n, k->c * k->b * k->b, k->h, k->w};
        const uint32_t space[4] = {k->n, k->c, k->h * k->b, k->w * k->b};
        uint64_t sx[4], sy[4];
        clops_tensor_desc x = {k->type, {0}, NULL}, y = {k->type, {0}, NULL};
        memcpy(x.sizes, k->d2s ? deep : space, sizeof x.sizes);
        memcpy(y.sizes, k->d2s ? space : deep, sizeof y.sizes);
        x.strides = layout_strides(x.sizes, k->layout, sx);
        y.strides = layout_strides(y.sizes, k->layout, sy);
        clops_depth_to_space_desc d = {&x, &y, k->b, k->order ? CLOPS_ORDER_COLUMN_ROW_DEPTH
                                                               : CLOPS_ORDER_DEPTH_COLUMN_ROW};
        const clops_operator_desc desc = {k->d2s ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH, &d};
        snprintf(label, sizeof label, "%s %s {%u, %u, %u, %u} block %u", k->d2s ? "DepthToSpace" : "SpaceToDepth",
                 clops_data_type_name(k->type), x.sizes[0], x.sizes[1], x.sizes[2], x.sizes[3], k->b);
        check_built(ctx, &l, &desc, label);
    }
    for (int i = 0; i < UNPOOL_CASES; i++) {
        const struct unpool_case *k = &unpool_cases[i];
        uint64_t sx[4], si[4], sy[4];
        clops_tensor_desc x = {k->type, {k->n, k->c, k->h, k->w}, NULL};
        clops_tensor_desc ind = {k->index_type, {k->n, k->c, k->h, k->w}, NULL};
        clops_tensor_desc y = {k->type, {k->n, k->c, k->oh, k->ow}, NULL};
        x.strides = layout_strides(x.sizes, k->layout, sx);
        ind.strides = layout_strides(ind.sizes, k->layout, si);
        y.strides = layout_strides(y.sizes, k->out_packed ? PACKED : k->layout, sy);
        clops_max_unpooling_desc d = {&x, &ind, &y, k->per_plane ? CLOPS_INDICES_PER_PLANE : CLOPS_INDICES_FLAT};
        const clops_operator_desc desc = {CLOPS_OPERATOR_MAX_UNPOOLING, &d};
        snprintf(label, sizeof label, "MaxUnpooling %s %s {%u, %u, %u, %u} -> {%u, %u} layout %d%s",
                 clops_data_type_name(k->type), clops_data_type_name(k->index_type), k->n, k->c, k->h, k->w, k->oh,
                 k->ow, k->layout, k->per_plane ? " per plane" : "");
        check_built(ctx, &l, &desc, label);
    }
    clops_context_free(ctx);
    free_listed(&l);
}
END_TEST


/* "... N programs: built B, already cached C, failed F" of `clops kernels build`. */
static void build_counts(size_t *total, size_t *built, size_t *cached, size_t *failed)
{
    const char *at = strstr(res.out, " programs: built ");
    ck_assert_msg(at != NULL, "kernels build: no summary in '%.400s'", res.out);
    const char *start = at;
    while (start > res.out && start[-1] != ' ') start--;
    ck_assert_int_eq(sscanf(start, "%zu programs: built %zu, already cached %zu, failed %zu", total, built, cached,
                            failed), 4);
}

/* A DepthToSpace or SpaceToDepth operator of UINT8, block 3, packed, on a fresh
 * context: where its program came from. */
static void check_origin(int d2s, clops_depth_space_order order, uint32_t w)
{
    const uint32_t deep[4] = {1, 9, 4, w}, space[4] = {1, 1, 12, 3 * w};
    clops_tensor_desc x = {CLOPS_DATA_TYPE_UINT8, {0}, NULL}, y = {CLOPS_DATA_TYPE_UINT8, {0}, NULL};
    memcpy(x.sizes, d2s ? deep : space, sizeof x.sizes);
    memcpy(y.sizes, d2s ? space : deep, sizeof y.sizes);
    clops_depth_to_space_desc d = {&x, &y, 3, order};
    const clops_operator_desc desc = {d2s ? CLOPS_OPERATOR_DEPTH_TO_SPACE : CLOPS_OPERATOR_SPACE_TO_DEPTH, &d};
    clops_context *ctx = NULL;
    ck_assert_int_eq(clops_context_create(&ctx), CLOPS_SUCCESS);
    clops_operator *op = NULL;
    const clops_status st = clops_operator_create(ctx, &desc, &op);
    ck_assert_msg(st == CLOPS_SUCCESS, "%s: %.400s", clops_status_name(st), clops_last_error_message());
    clops_operator_info info;
    ck_assert_int_eq(clops_operator_get_info(op, &info), CLOPS_SUCCESS);
    ck_assert_int_eq(info.backend, CLOPS_BACKEND_OPENCL);
    ck_assert_msg(strcmp(info.program_origin, "disk cache") == 0, "%s order %d width %u: program origin '%s' (%s), "
                  "not 'disk cache' after 'clops kernels build'", d2s ? "DepthToSpace" : "SpaceToDepth", (int)order,
                  w, info.program_origin, info.build_options);
    clops_operator_free(op);
    clops_context_free(ctx);
}

START_TEST(test_build_fills_the_cache)
{
    if (!have_device) {
        const char *req = getenv("CLOPS_REQUIRE_DEVICE");
        ck_assert_msg(!(req && strcmp(req, "1") == 0), "no OpenCL device (CLOPS_REQUIRE_DEVICE=1)");
        fprintf(stderr, "SKIP: test_build_fills_the_cache: no OpenCL device\n");
        return;
    }
    char dir[512];
    tmp_path(dir, sizeof dir, "prepared-cache");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(setenv("CLOPS_CACHE_DIR", dir, 1), 0); /* the CLI inherits it, and so do the contexts below */
    unsetenv("CLOPS_CACHE");

    run("kernels", "build", "--ops", "d2s,s2d", "--types", "UINT8", "--blocks", "3", "--layouts", "packed",
        "--jobs", "2", NULL);
    ck_assert_msg(res.exit_code == 0, "kernels build: exit %d: %.400s", res.exit_code, res.err);
    size_t total, built, cached, failed;
    build_counts(&total, &built, &cached, &failed);
    ck_assert_uint_gt(total, 0);
    ck_assert_uint_eq(built, total);
    ck_assert_uint_eq(cached, 0);
    ck_assert_uint_eq(failed, 0);
    /* not a terminal: one progress line per program */
    size_t lines = 0;
    for (const char *c = res.err; *c; c++) lines += *c == '\n';
    ck_assert_uint_eq(lines, total);

    /* short and long rows (the whole-row and the chunked program), both orders */
    for (int d2s = 0; d2s < 2; d2s++)
        for (int order = 0; order < 2; order++) {
            check_origin(d2s, (clops_depth_space_order)order, 5);
            check_origin(d2s, (clops_depth_space_order)order, 5000);
        }

    run("kernels", "build", "--ops", "d2s,s2d", "--types", "UINT8", "--blocks", "3", "--layouts", "packed", NULL);
    ck_assert_msg(res.exit_code == 0, "second kernels build: exit %d: %.400s", res.exit_code, res.err);
    size_t total2;
    build_counts(&total2, &built, &cached, &failed);
    ck_assert_uint_eq(total2, total);
    ck_assert_uint_eq(built, 0);
    ck_assert_uint_eq(cached, total);
    ck_assert_uint_eq(failed, 0);
    DIR *d = opendir(dir); /* the cache's writes are atomic: no temporary file is left */
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        ck_assert_msg(strstr(e->d_name, ".tmp") == NULL, "temporary file left in the cache: %s", e->d_name);
    closedir(d);
}
END_TEST

/* A cache that is off: nothing can be prepared, exit 1 with the reason. */
START_TEST(test_build_without_cache)
{
    if (!have_device) return;
    ck_assert_int_eq(setenv("CLOPS_CACHE", "off", 1), 0);
    run("kernels", "build", "--ops", "d2s", "--types", "UINT8", "--blocks", "2", "--layouts", "packed", NULL);
    unsetenv("CLOPS_CACHE");
    ck_assert_int_eq(res.exit_code, 1);
    ck_assert_msg(strstr(res.err, "CLOPS_ERROR_CACHE_UNAVAILABLE") != NULL, "%.400s", res.err);
}
END_TEST

static Suite *cli_kernels_suite(void)
{
    Suite *s = suite_create("cli_kernels");
    TCase *tc = cli_case(s);
    tcase_add_test(tc, test_list_names_every_built_program);
    tcase_add_test(tc, test_build_fills_the_cache);
    tcase_add_test(tc, test_build_without_cache);
    return s;
}

int main(void)
{
    return cli_suite_main(cli_kernels_suite());
}
