/* conformance_cover.c - plan coverage of `clops conformance`: the MaxUnpooling
 * cases that reach every plan the device would choose for real shapes, the
 * record of which kernels each group's cases launched and which of them did the
 * work (api/introspect.h), and the coverage check: every kernel the device's
 * plan rules could take must have been reached by its group. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/introspect.h"
#include "conformance.h"

/* The kernels of the kernels/ files, in the order the report lists them; a name the
 * library launches that is not here is added after them. */
static const char *const known[] = {"depth_to_space", "depth_to_space_tile", "depth_to_space_rows", "space_to_depth",
                                    "space_to_depth_tile", "space_to_depth_rows", "serial", "clear", "windows", "pool",
                                    "planes", "bucket", "tiles", "mark", "place", "bin", "settle"};
#define KNOWN (sizeof known / sizeof known[0])
#define MAX_KERNELS 24
#define MAX_PLANS 16
#define PLAN_CHARS 128

typedef struct cover_group {
    uint32_t live, launched;              /* bit i: kernel names[i] */
    char plans[MAX_PLANS][PLAN_CHARS];    /* distinct launch sequences, "windows+planes+bucket+tiles" */
    unsigned nplans, device_runs;         /* executions on the device's kernels */
    bool portable;                        /* they ran the portable program's kernels */
} cover_group;

struct conf_cover {
    cl_device_type type;
    unsigned units, loops; /* loops: the device's loop limit (0: none known) */
    char names[MAX_KERNELS][CLOPS_KERNEL_NAME_MAX];
    unsigned nnames;
    cover_group g[CONF_ROWS][CONF_TYPES];
};

conf_cover *conf_cover_new(clops_context *ctx)
{
    conf_cover *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (clops_introspect_device(ctx, &c->type, &c->units, &c->loops) != CLOPS_SUCCESS) c->type = 0, c->units = 1;
    for (size_t i = 0; i < KNOWN; i++) snprintf(c->names[c->nnames++], CLOPS_KERNEL_NAME_MAX, "%s", known[i]);
    return c;
}

void conf_cover_free(conf_cover *c)
{
    free(c);
}

static int kernel_bit(conf_cover *c, const char *name)
{
    for (unsigned i = 0; i < c->nnames; i++)
        if (strcmp(c->names[i], name) == 0) return (int)i;
    if (c->nnames == MAX_KERNELS) return -1;
    snprintf(c->names[c->nnames], CLOPS_KERNEL_NAME_MAX, "%s", name);
    return (int)c->nnames++;
}

void conf_cover_record(conf_run *run, clops_operator *op)
{
    conf_cover *c = run->cover;
    clops_launched l;
    if (!c || !op || clops_introspect_launches(op, &l) != CLOPS_SUCCESS || l.count == 0) return;
    cover_group *g = &c->g[run->row][run->type_index];
    char plan[PLAN_CHARS] = "";
    size_t used = 0;
    for (unsigned i = 0; i < l.count; i++) {
        char role[CLOPS_KERNEL_NAME_MAX];
        const bool portable = strncmp(l.kernel[i], "clops_", 6) == 0; /* kernels/portable.cl */
        g->portable |= portable;
        const int bit = kernel_bit(c, portable ? clops_introspect_kernel_role(l.kernel[i], role, sizeof role)
                                               : l.kernel[i]);
        if (bit >= 0) g->launched |= 1u << bit, g->live |= l.live[i] ? 1u << bit : 0;
        const int n = snprintf(plan + used, sizeof plan - used, "%s%s", i ? "+" : "", l.kernel[i]);
        if (n > 0 && (size_t)n < sizeof plan - used) used += (size_t)n;
    }
    clops_operator_info info;
    if (clops_operator_get_info(op, &info) == CLOPS_SUCCESS && strstr(info.build_options, "-DVEC=1")) {
        const int n = snprintf(plan + used, sizeof plan - used, " (vectors)");
        if (n > 0 && (size_t)n < sizeof plan - used) used += (size_t)n;
    }
    g->device_runs++;
    for (unsigned i = 0; i < g->nplans; i++)
        if (strcmp(g->plans[i], plan) == 0) return;
    if (g->nplans < MAX_PLANS) memcpy(g->plans[g->nplans++], plan, sizeof plan);
}

/* The kernels the device's plan rules can take for row `row` (ctx->info.type):
 * DepthToSpace/SpaceToDepth's element loop everywhere, its local-memory tile
 * loop (8- and 16-byte elements) and vector rows (1 to 4 bytes: the GPU classes'
 * rows_max_bytes) on GPUs (lib/ops/depth_space.c default_loop, cl/params.c); MaxUnpooling's serial,
 * clear, windows and pool (on CPUs too, for tensors with few planes) everywhere;
 * on CPUs planes and the general path bucket and tiles, and behind them, under a
 * loop limit, mark and place for crowded tiles; elsewhere the general path mark
 * and place, and for 1- and 2-byte elements bin and settle in front of them (on
 * no device with a loop limit: bin and settle need one of about 2^16 loops at
 * most tile sizes, which the cases do not pin) (lib/ops/max_unpooling.c
 * make_plan, planes_allowed, uses_mark, sort_plan). A group whose cases ran the
 * portable program (lib/ops/portable.c): permute, or windows, mark and place. */
static uint32_t expected(conf_cover *c, int row, size_t elem_size, bool portable)
{
    const bool gpu = (c->type & CL_DEVICE_TYPE_GPU) != 0, cpu = (c->type & CL_DEVICE_TYPE_CPU) != 0;
    static const char *const unpool[] = {"serial", "clear", "windows", "pool"};
    uint32_t m = 0;
    if (portable) /* the group ran the portable program (portable.cl): its kernels, by role */
        return row < 4 ? 1u << kernel_bit(c, "permute")
                       : 1u << kernel_bit(c, "windows") | 1u << kernel_bit(c, "mark") | 1u << kernel_bit(c, "place");
    if (row < 4) {
        const bool d2s = row < 2;
        m |= 1u << kernel_bit(c, d2s ? "depth_to_space" : "space_to_depth");
        if (gpu && elem_size <= 4) m |= 1u << kernel_bit(c, d2s ? "depth_to_space_rows" : "space_to_depth_rows");
        else if (gpu) m |= 1u << kernel_bit(c, d2s ? "depth_to_space_tile" : "space_to_depth_tile");
        return m;
    }
    for (size_t i = 0; i < sizeof unpool / sizeof unpool[0]; i++) m |= 1u << kernel_bit(c, unpool[i]);
    if (cpu) m |= 1u << kernel_bit(c, "planes") | 1u << kernel_bit(c, "bucket") | 1u << kernel_bit(c, "tiles");
    if (!cpu || c->loops) m |= 1u << kernel_bit(c, "mark") | 1u << kernel_bit(c, "place");
    if (!cpu && elem_size <= 2 && !c->loops) m |= 1u << kernel_bit(c, "bin") | 1u << kernel_bit(c, "settle");
    return m;
}

static const char *type_words(cl_device_type t)
{
    return t & CL_DEVICE_TYPE_GPU ? "GPU" : t & CL_DEVICE_TYPE_CPU ? "CPU" : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other";
}

/* " a b c" of the kernels in `mask`, into buf. */
static void names_of(const conf_cover *c, uint32_t mask, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < c->nnames; i++)
        if (mask >> i & 1) {
            const int n = snprintf(buf + used, size - used, " %s", c->names[i]);
            if (n > 0 && (size_t)n < size - used) used += (size_t)n;
        }
}

static cJSON *name_array(const conf_cover *c, uint32_t mask)
{
    cJSON *a = cJSON_CreateArray();
    for (unsigned i = 0; i < c->nnames; i++)
        if (mask >> i & 1) cJSON_AddItemToArray(a, cJSON_CreateString(c->names[i]));
    return a;
}

/* Appends printf output to a growing text. */
static void append(char **text, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char **text, size_t *len, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    char *grown = realloc(*text, *len + (size_t)n + 1);
    if (!grown) return;
    memcpy(grown + *len, line, (size_t)n + 1);
    *text = grown;
    *len += (size_t)n;
}

static bool same_group(const cover_group *a, const cover_group *b)
{
    if (a->live != b->live || a->launched != b->launched || a->nplans != b->nplans) return false;
    for (unsigned i = 0; i < a->nplans; i++)
        if (strcmp(a->plans[i], b->plans[i]) != 0) return false;
    return true;
}

void conf_cover_finish(conf_run *run)
{
    conf_cover *c = run->cover;
    if (!c) return;
    char *text = NULL;
    size_t len = 0;
    cJSON *json = cJSON_CreateObject(), *groups = cJSON_CreateArray();
    cJSON_AddStringToObject(json, "planned_device_type", type_words(c->type));
    cJSON_AddNumberToObject(json, "compute_units", c->units);
    append(&text, &len, "plan coverage (device planned as %s, %u compute units): kernels whose work reached the output\n",
           type_words(c->type), c->units);
    unsigned missing_groups = 0;
    for (int row = 0; row < CONF_ROWS; row++) {
        bool printed[CONF_TYPES] = {false};
        for (int t = 0; t < CONF_TYPES; t++) {
            cover_group *g = &c->g[row][t];
            const uint32_t want = expected(c, row, clops_data_type_size(conf_types[t]), g->portable);
            /* A group that ran only on the host (the device cannot take the type) expects nothing. */
            const uint32_t need = g->device_runs ? want : 0, missing = need & ~g->live;
            char kernels[512], miss[512], what[160];
            names_of(c, g->live, kernels, sizeof kernels);
            names_of(c, missing, miss, sizeof miss);
            snprintf(what, sizeof what, "plan coverage: %s %s", conf_row_name(row), clops_data_type_name(conf_types[t]));
            char detail[700];
            snprintf(detail, sizeof detail, "the device could take these kernels and no case reached them:%s", miss);
            conf_report_check(run->report, row, t, missing == 0, what, missing ? detail : NULL);
            if (missing) {
                missing_groups++;
                fprintf(stderr, "FAIL: %s: %s\n", what, detail);
            }
            if (!printed[t]) { /* one line for every type whose cases launched the same */
                char types[512] = "";
                size_t used = 0;
                unsigned same = 0;
                for (int u = t; u < CONF_TYPES; u++)
                    if (!printed[u] && same_group(g, &c->g[row][u])) {
                        printed[u] = true;
                        same++;
                        const int n = snprintf(types + used, sizeof types - used, "%s%s", used ? " " : "",
                                               clops_data_type_name(conf_types[u]));
                        if (n > 0 && (size_t)n < sizeof types - used) used += (size_t)n;
                    }
                append(&text, &len, "  %s, %s: kernels:%s\n", conf_row_name(row), same == CONF_TYPES ? "all types" : types,
                       g->device_runs ? kernels : " (host only)");
                for (unsigned p = 0; p < g->nplans; p++) append(&text, &len, "      plan: %s\n", g->plans[p]);
            }
            if (missing)
                append(&text, &len, "  COVERAGE FAILURE: %s %s: not reached:%s\n", conf_row_name(row),
                       clops_data_type_name(conf_types[t]), miss);
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "operator", conf_row_name(row));
            cJSON_AddStringToObject(e, "data_type", clops_data_type_name(conf_types[t]));
            cJSON *plans = cJSON_AddArrayToObject(e, "plans");
            for (unsigned p = 0; p < g->nplans; p++) cJSON_AddItemToArray(plans, cJSON_CreateString(g->plans[p]));
            cJSON_AddItemToObject(e, "kernels", name_array(c, g->live));
            cJSON_AddItemToObject(e, "launched", name_array(c, g->launched));
            cJSON_AddItemToObject(e, "expected", name_array(c, need));
            cJSON_AddItemToObject(e, "missing", name_array(c, missing));
            cJSON_AddItemToArray(groups, e);
        }
    }
    append(&text, &len, "plan coverage: %s\n",
           missing_groups ? "FAILED: kernels the device could take were not reached (see COVERAGE FAILURE)"
                          : "every kernel the device could take was reached in every group");
    cJSON_AddBoolToObject(json, "complete", missing_groups == 0);
    cJSON_AddItemToObject(json, "groups", groups);
    conf_report_coverage(run->report, json, text);
    free(text);
}

/* Packed NCHW, or "padded": gaps after every row, plane and batch. */
static void cover_layout(conf_layout *t, const char *layout, uint32_t n, uint32_t c, uint32_t h, uint32_t w)
{
    conf_packed(t, n, c, h, w);
    if (strcmp(layout, "padded") == 0) {
        t->strides[2] = (uint64_t)w + 3;
        t->strides[1] = (uint64_t)h * t->strides[2] + 5;
        t->strides[0] = (uint64_t)c * t->strides[1] + 7;
    }
}

/* ---- the cases that reach every plan ---------------------------------------------------------- */

void conf_cover_depth_space_cases(conf_run *run, clops_operator_type op, clops_depth_space_order order,
                                  clops_data_type type)
{
    const bool d2s = op == CLOPS_OPERATOR_DEPTH_TO_SPACE;
    /* The deep side's rows (DepthToSpace's input, SpaceToDepth's output) past 8 KiB. */
    const uint32_t b = 2, sw = (uint32_t)(8192 / clops_data_type_size(type)) + 19;
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        conf_case k = {.op = op, .order = order, .type = type, .block = b, .layout = nhwc ? "NHWC" : "packed",
                       .shape = "rows past 8 KiB", .indices = "", .packed = !nhwc};
        /* Deep side {1, 3*b*b, 2, sw}, spatial side {1, 3, 2*b, sw*b}. */
        const uint32_t n = 1, c = 3, h = 2;
        cover_layout(&k.x, "packed", n, d2s ? c * b * b : c, d2s ? h : h * b, d2s ? sw : sw * b);
        cover_layout(&k.y, "packed", n, d2s ? c : c * b * b, d2s ? h * b : h, d2s ? sw * b : sw);
        if (nhwc)
            for (int i = 0; i < 2; i++) {
                conf_layout *t = i ? &k.y : &k.x;
                const uint64_t cc = t->sizes[1], hh = t->sizes[2], ww = t->sizes[3];
                t->strides[3] = cc, t->strides[2] = ww * cc, t->strides[1] = 1, t->strides[0] = hh * ww * cc;
            }
        conf_run_case(run, &k);
    }
}

/* ---- MaxUnpooling ---------------------------------------------------------------------------- */

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum { IDX_WINDOWS, IDX_POOL3, IDX_SCATTERED, IDX_REPEATED };
enum { MOD_NONE, MOD_OUTSIDE, MOD_FAR, MOD_OUT_OF_RANGE };

typedef struct cover_shape {
    const char *indices, *shape, *layout;
    int kind, mod;
    bool per_plane;
    uint32_t n, c, h, w, oh, ow;
} cover_shape;

static void put_index(unsigned char *buf, size_t isize, uint64_t at, int64_t v)
{
    if (isize == 4) {
        const uint32_t u = (uint32_t)v;
        memcpy(buf + at * 4, &u, 4);
    } else {
        memcpy(buf + at * 8, &v, 8);
    }
}

/* The indices of `s` over k's indices layout (gaps hold junk). */
static void make_cover_indices(const cover_shape *s, const conf_case *k, unsigned char *buf, size_t bytes, uint64_t seed)
{
    const size_t isize = clops_data_type_size(k->index_type);
    uint64_t r = seed;
    for (size_t i = 0; i < bytes; i++) buf[i] = (unsigned char)(next(&r) >> 40);
    const uint64_t plane = (uint64_t)s->oh * s->ow, count = plane * s->n * s->c;
    uint64_t kth = 0;
    for (uint64_t n = 0; n < s->n; n++)
        for (uint64_t c = 0; c < s->c; c++)
            for (uint64_t h = 0; h < s->h; h++)
                for (uint64_t w = 0; w < s->w; w++, kth++) {
                    const uint64_t bits = next(&r), base = (n * s->c + c) * plane;
                    uint64_t oh = 0, ow = 0, flat;
                    if (s->kind == IDX_WINDOWS) { /* one position of each 2x2 window */
                        oh = 2 * h + (bits & 1), ow = 2 * w + (bits >> 1 & 1);
                        if (s->mod == MOD_OUTSIDE && kth % 97 == 5 && 2 * w + 2 < s->ow) oh = 2 * h + 1, ow = 2 * w + 2;
                    } else if (s->kind == IDX_POOL3) { /* max_pool2d(3, 2, 1): rows 2h-1..2h+1, clipped */
                        const uint64_t dh = bits % 3, dw = (bits >> 8) % 3;
                        oh = 2 * h + dh >= 1 ? 2 * h + dh - 1 : 0, ow = 2 * w + dw >= 1 ? 2 * w + dw - 1 : 0;
                        if (oh >= s->oh) oh = s->oh - 1;
                        if (ow >= s->ow) ow = s->ow - 1;
                    } else { /* anywhere in the plane (per-plane) or the output (flat) */
                        const uint64_t v = s->kind == IDX_REPEATED ? bits % 3 : bits % (s->per_plane ? plane : count);
                        oh = v / s->ow, ow = v % s->ow; /* flat: v itself below */
                    }
                    const bool anywhere = s->kind == IDX_SCATTERED || s->kind == IDX_REPEATED;
                    flat = (anywhere || s->per_plane ? 0 : base) + oh * s->ow + ow;
                    int64_t v = (int64_t)flat;
                    if (s->mod == MOD_FAR && kth == 7) v = (int64_t)(count - 1); /* the last plane's last element */
                    if (s->mod == MOD_OUT_OF_RANGE && kth < 2)
                        v = kth == 0 ? (int64_t)(s->per_plane ? plane : count)
                                     : k->index_type == CLOPS_DATA_TYPE_INT64 ? -1 : (int64_t)(s->per_plane ? plane : count) + 9;
                    const uint64_t at = n * k->ind.strides[0] + c * k->ind.strides[1] + h * k->ind.strides[2] +
                                        w * k->ind.strides[3];
                    put_index(buf, isize, at, v);
                }
}

void conf_cover_unpool_cases(conf_run *run, clops_data_type type, clops_data_type index_type)
{
    /* Enough planes for the planes plan on a CPU (2 per compute unit; at least
     * 320, as a device of up to 160 units needs), small ones, together above
     * the serial plan's 4096 input elements. */
    const uint32_t units = run->cover ? run->cover->units : 1;
    const uint32_t planes = 2 * units > 320 ? 2 * units : 320, area = (4200 + planes - 1) / planes;
    uint32_t ph = 2;
    while ((ph + 1) * (ph + 1) <= area) ph++;
    const uint32_t pw = (area + ph - 1) / ph < 2 ? 2 : (area + ph - 1) / ph;
    const cover_shape shapes[] = {
        {"2x2 pooling (serial after clear)", "output above 4096", "packed", IDX_WINDOWS, MOD_NONE, false, 1, 2, 32, 32, 64, 64},
        {"2x2 pooling", "windows", "packed", IDX_WINDOWS, MOD_NONE, false, 1, planes, ph, pw, 2 * ph, 2 * pw},
        {"2x2 pooling", "windows", "packed", IDX_WINDOWS, MOD_NONE, true, 1, planes, ph, pw, 2 * ph, 2 * pw},
        {"2x2 pooling", "windows", "padded", IDX_WINDOWS, MOD_NONE, false, 1, planes, ph, pw, 2 * ph, 2 * pw},
        {"2x2 pooling, some outside their window", "windows", "packed", IDX_WINDOWS, MOD_OUTSIDE, true, 1, planes, ph, pw, 2 * ph, 2 * pw},
        {"2x2 pooling, some outside their window", "windows", "padded", IDX_WINDOWS, MOD_OUTSIDE, false, 1, planes, ph, pw, 2 * ph, 2 * pw},
        {"2x2 pooling, one in another plane", "windows", "packed", IDX_WINDOWS, MOD_FAR, false, 1, planes, ph, pw, 2 * ph, 2 * pw},
        {"3x3/2/1 pooling", "one plane", "packed", IDX_POOL3, MOD_NONE, false, 1, 1, 66, 66, 131, 131},
        {"3x3/2/1 pooling", "many planes", "packed", IDX_POOL3, MOD_NONE, true, 1, planes, ph, pw, 2 * ph - 1, 2 * pw - 1},
        {"3x3/2/1 pooling", "many planes", "padded", IDX_POOL3, MOD_NONE, false, 1, planes, ph, pw, 2 * ph - 1, 2 * pw - 1},
        {"3x3/2/1 pooling, out of range", "many planes", "packed", IDX_POOL3, MOD_OUT_OF_RANGE, true, 1, planes, ph, pw, 2 * ph - 1, 2 * pw - 1},
        {"scattered", "general shape", "packed", IDX_SCATTERED, MOD_NONE, false, 1, 2, 3, 700, 3, 4001},
        {"scattered", "general shape", "packed", IDX_SCATTERED, MOD_NONE, true, 1, 2, 3, 700, 3, 4001},
        {"scattered", "general shape", "padded", IDX_SCATTERED, MOD_NONE, false, 1, 2, 3, 700, 3, 4001},
        {"repeated", "general shape", "packed", IDX_REPEATED, MOD_NONE, false, 1, 2, 3, 700, 3, 4001},
        /* 40,000 inputs naming 3 elements: one tile more crowded than a work-item may loop over
         * on a device with a loop limit (llvmpipe), so mark and place write the output there */
        {"repeated", "crowded tile", "packed", IDX_REPEATED, MOD_NONE, false, 1, 1, 1, 40000, 1, 204001},
        {"scattered, out of range", "general shape", "packed", IDX_SCATTERED, MOD_OUT_OF_RANGE, false, 1, 2, 3, 700, 3, 4001},
        /* Shapes that failed on real devices (issue 31): a long row into a much longer one (an H100's
         * general path), per-plane scattered indices on window-shaped planes (an H100's per-plane
         * path), and a SegNet-sized max_pool2d(3, 2, 1) (rusticl's windows and planes; the
         * largest case, with INT64 indices only, as PyTorch gives them). */
        {"scattered", "long row", "packed", IDX_SCATTERED, MOD_NONE, false, 1, 1, 1, 9000, 1, 50000},
        {"scattered", "window-shaped planes", "packed", IDX_SCATTERED, MOD_NONE, true, 3, 5, 40, 40, 80, 80},
        {"3x3/2/1 pooling", "64 planes of 64x64", "packed", IDX_POOL3, MOD_NONE, true, 1, 64, 64, 64, 128, 128},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const cover_shape *s = &shapes[i];
        if (strcmp(s->shape, "64 planes of 64x64") == 0 && index_type != CLOPS_DATA_TYPE_INT64) continue;
        conf_case k = {.op = CLOPS_OPERATOR_MAX_UNPOOLING, .type = type, .index_type = index_type,
                       .layout = s->layout, .shape = s->shape, .indices = s->indices, .per_plane = s->per_plane,
                       .packed = strcmp(s->layout, "packed") == 0};
        cover_layout(&k.x, s->layout, s->n, s->c, s->h, s->w);
        cover_layout(&k.ind, s->layout, s->n, s->c, s->h, s->w);
        cover_layout(&k.y, s->layout, s->n, s->c, s->oh, s->ow);
        if (run->counting) { /* the plan is chosen from the shapes alone: no indices to make */
            conf_run_case(run, &k);
            continue;
        }
        const size_t bytes = (size_t)conf_span(&k.ind) * clops_data_type_size(index_type);
        unsigned char *idx = malloc(bytes ? bytes : 1);
        if (!idx) continue; /* conf_run_case reports the next allocation failure */
        make_cover_indices(s, &k, idx, bytes, run->seed * 31 + i);
        k.index_data = idx;
        conf_run_case(run, &k);
        free(idx);
    }
}
