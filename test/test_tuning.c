/*
 * test_tuning.c - the tuning database: the file clops_tune writes, what a
 * context reads back from it (and what it refuses), a quick tuning run, and the
 * vector-rows kernels' vector widths the tuner tries (forced as it forces them,
 * and read back from the database) under a GPU device profile.
 * Shared fixtures: cache_fixture.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "api/api.h"
#include "cl/params.h"
#include "reference.h"
#include "test_fs.h"

/* ---- tuning database ------------------------------------------------------------------------------------------ */

/* The case's operator: its local size, origin and build options, and what
 * it runs with: positions per work-item, bytes per vector of the vector-rows
 * kernels (0: they do not run) and the element size. */
typedef struct op_choice {
    char origin[16];
    size_t local[3];
    char options[CLOPS_OPTIONS_MAX];
    char tune_key[CLOPS_OPTIONS_MAX];
    unsigned chunk, vector_bytes, es;
} op_choice;

static op_choice choose(clops_context *ctx, const tc_case *d, const char *label)
{
    tc_prepared p;
    prepare_ok(&p, d);
    clops_operator_info info;
    clops_operator *op = create_op(ctx, &p, &info, label);
    expect_path(&p, &info, CLOPS_BACKEND_OPENCL, NULL, label);
    op_choice c;
    snprintf(c.origin, sizeof c.origin, "%s", info.local_size_origin);
    memcpy(c.local, info.local_size, sizeof c.local);
    snprintf(c.options, sizeof c.options, "%s", info.build_options);
    snprintf(c.tune_key, sizeof c.tune_key, "%s", op->tune_key);
    c.chunk = op->chunk;
    c.vector_bytes = op->vector_bytes;
    c.es = (unsigned)clops_data_type_size(d->dtype);
    run_and_compare(ctx, op, &p, label);
    clops_operator_free(op);
    tc_release(&p);
    return c;
}

static void expect_heuristic(const op_choice *got, const op_choice *base, const char *label)
{
    ck_assert_msg(strcmp(got->origin, "heuristic") == 0, "%s: local_size_origin \"%s\", want \"heuristic\"", label,
                  got->origin);
    ck_assert_msg(memcmp(got->local, base->local, sizeof got->local) == 0 && strcmp(got->options, base->options) == 0,
                  "%s: local %zu,%zu,%zu options \"%s\", want the untuned %zu,%zu,%zu \"%s\"", label, got->local[0],
                  got->local[1], got->local[2], got->options, base->local[0], base->local[1], base->local[2],
                  base->options);
}

/* The operator runs the tuned chunk (positions) and local size, and the
 * vector-rows kernels at `vector_bytes` per vector (0: not those kernels): its
 * build options say -DCHUNK=<vectors> -DVEC=1 -DROWS=1 -DVW=<lanes> there,
 * -DCHUNK=<positions> elsewhere. */
static void expect_tuned(const op_choice *got, unsigned chunk, const size_t local[3], unsigned vector_bytes,
                         const char *label)
{
    ck_assert_msg(strcmp(got->origin, "tuned") == 0, "%s: local_size_origin \"%s\", want \"tuned\"", label,
                  got->origin);
    ck_assert_msg(memcmp(got->local, local, 3 * sizeof local[0]) == 0, "%s: local %zu,%zu,%zu, want tuned %zu,%zu,%zu",
                  label, got->local[0], got->local[1], got->local[2], local[0], local[1], local[2]);
    ck_assert_msg(got->chunk == chunk && got->vector_bytes == vector_bytes,
                  "%s: chunk %u, vector bytes %u (options %s); want chunk %u, vector bytes %u", label, got->chunk,
                  got->vector_bytes, got->options, chunk, vector_bytes);
    char want[96];
    const unsigned lanes = vector_bytes / got->es;
    if (vector_bytes)
        snprintf(want, sizeof want, "-DCHUNK=%uu -DVEC=1 -DROWS=1 -DVW=%u ", chunk / lanes, lanes);
    else
        snprintf(want, sizeof want, "-DCHUNK=%uu", chunk);
    ck_assert_msg(strstr(got->options, want) != NULL, "%s: build options \"%s\" lack the tuned %s", label, got->options,
                  want);
}

typedef struct tune_log {
    unsigned calls, last_done, total;
    int order_ok;
    clops_tune_result r[16];
} tune_log;

static void tune_progress(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    tune_log *log = user;
    if (done != log->calls + 1)
        log->order_ok = 0;
    if (log->calls < 16)
        log->r[log->calls] = *r;
    log->calls++;
    log->last_done = done;
    log->total = total;
}

START_TEST(test_tune_quick)
{
    clops_context *ctx = new_ctx();
    const unsigned dev = ctx->info.index;
    const int cpu = (ctx->info.type & CL_DEVICE_TYPE_CPU) != 0; /* as planned (a test device profile) */
    tune_log log;
    memset(&log, 0, sizeof log);
    log.order_ok = 1;
    clops_status st = clops_tune(dev, 1, tune_progress, &log);
    ck_assert_msg(st == CLOPS_SUCCESS, "clops_tune(%u, quick): %s (%s)", dev, clops_status_name(st),
                  clops_last_error_message());
    ck_assert_msg(log.calls == 8 && log.total == 8 && log.last_done == 8 && log.order_ok,
                  "progress: %u calls, done %u of %u, in order %d; want 8 calls, 8 of 8", log.calls, log.last_done,
                  log.total, log.order_ok);
    dir_scan s = scan_dir();
    ck_assert_msg(s.tunes == 1 && s.temps == 0, "%d tuning files and %d temporary files", s.tunes, s.temps);
    char path[PATH_MAX + 64];
    tune_file_path(ctx, path, sizeof path);
    ck_assert_msg(exists(path), "no tuning database %s (found %s)", path, s.tune);
    size_t len;
    char *text = (char *)read_all(path, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    char head[256];
    snprintf(head, sizeof head, "clops-tune 1\ndevice %s\n", clops_context_device_name(ctx));
    ck_assert_msg(strncmp(text, head, strlen(head)) == 0, "tuning database starts \"%.80s\"", text);
    int lines = 0, tabs = 0;
    for (const char *q = text; *q; q++) {
        if (*q == '\t')
            tabs++;
        if (*q == '\n') {
            /* each result's line: key, chunk, local size, GB/s, default GB/s, loop, vector bytes */
            ck_assert_msg(lines < 2 || tabs == 6, "tuning database line %d has %d tabs, want 6: %.300s", lines + 1,
                          tabs, text);
            lines++;
            tabs = 0;
        }
    }
    /* One line per variant whose winner beat the default when measured again. */
    int kept = 0;
    for (unsigned i = 0; i < 8; i++)
        kept += log.r[i].kept != 0;
    ck_assert_msg(lines == 2 + kept, "tuning database has %d lines, want %d (2 + %d kept variants)", lines, 2 + kept,
                  kept);
    /* The cache keeps each variant's default program (DepthToSpace and SpaceToDepth
     * share one: 2 types x 2 orders) and the kept winners'; the other candidates'
     * binaries are removed. */
    ck_assert_msg(s.entries >= 4 && s.entries <= 4 + kept, "%d cache entries after tuning, want 4 to %d", s.entries,
                  4 + kept);
    free(text);
    drop_ctx(ctx);

    for (unsigned i = 0; i < 8; i++) {
        const clops_tune_result *r = &log.r[i];
        ck_assert_msg(r->block_size == 2 && (r->data_type == CLOPS_DATA_TYPE_UINT8 ||
                                             r->data_type == CLOPS_DATA_TYPE_FLOAT32),
                      "tuned variant %u: block %u type %d", i, r->block_size, (int)r->data_type);
        ck_assert_msg(r->chunk >= 1 && r->local[0] && r->local[1] && r->local[2] && r->gbps > 0 &&
                          r->default_gbps > 0,
                      "tuned variant %u: chunk %u local %zu,%zu,%zu %.3f GB/s (default %.3f)", i, r->chunk,
                      r->local[0], r->local[1], r->local[2], r->gbps, r->default_gbps);
        /* The vector-rows kernels' width: one of the candidates, and none on a CPU (they do not run there). */
        const unsigned vb = r->vector_bytes, es = (unsigned)clops_data_type_size(r->data_type);
        ck_assert_msg(vb == 0 || (!cpu && vb % es == 0 && (vb / es == 2 || vb / es == 4 || vb / es == 8 ||
                                                            vb / es == 16) && vb >= 4 && vb <= 32),
                      "tuned variant %u: vector bytes %u (%u-byte elements, %s plan)", i, vb, es, cpu ? "CPU" : "GPU");
        const uint32_t in_d2s[4] = {1, 8, 3, 5}, in_s2d[4] = {1, 2, 6, 10};
        tc_case d;
        memset(&d, 0, sizeof d);
        char name[96];
        snprintf(name, sizeof name, "tuned %s %s %s b2", r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ?
                 "DepthToSpace" : "SpaceToDepth", clops_data_type_name(r->data_type), tc_order_name(r->order));
        d.name = name;
        d.type = r->operator_type;
        d.dtype = r->data_type;
        memcpy(d.in, r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? in_d2s : in_s2d, sizeof d.in);
        d.block = 2;
        d.order = r->order;
        ctx = new_ctx();
        op_choice got = choose(ctx, &d, name);
        drop_ctx(ctx);
        if (r->kept)
            expect_tuned(&got, r->chunk, r->local, r->vector_bytes, name);
        else
            ck_assert_msg(strcmp(got.origin, "heuristic") == 0, "%s: not kept by the tuner, but local_size_origin \"%s\"",
                          name, got.origin);
        setenv("CLOPS_TUNE", "off", 1);
        ctx = new_ctx();
        op_choice off = choose(ctx, &d, name);
        drop_ctx(ctx);
        unsetenv("CLOPS_TUNE");
        ck_assert_msg(strcmp(off.origin, "heuristic") == 0, "%s with CLOPS_TUNE=off: local_size_origin \"%s\"", name,
                      off.origin);
    }
    /* a variant the quick tuner does not cover */
    ctx = new_ctx();
    op_choice other = choose(ctx, &CASE_B, "untuned variant");
    ck_assert_msg(strcmp(other.origin, "heuristic") == 0, "untuned variant: local_size_origin \"%s\"", other.origin);
}
END_TEST

/* What a context makes of a tuning database file. */
enum { USES_HEURISTIC, USES_TUNED, LOCAL_REFUSED /* the line parses; the scheduler refuses its local size */ };

/* Database files. In `text`, "@D" stands for the device's name, "@K" for the
 * variant's key, "@L" for a valid line for it (chunk 64, local size 1,16,1),
 * "@X" for 2,099 x's and "@R" for 600 random bytes without a NUL. */
typedef struct tune_case {
    const char *name, *text;
    int expect;
    int tune_off; /* CLOPS_TUNE=off while the context reads the file */
} tune_case;

static const tune_case tune_cases[] = {
    {"valid database", "clops-tune 1\ndevice @D\n@L", USES_TUNED, 0},
    {"valid, CLOPS_TUNE=off", "clops-tune 1\ndevice @D\n@L", USES_HEURISTIC, 1},
    {"binary garbage", "@R", USES_HEURISTIC, 0},
    {"another device's name", "clops-tune 1\ndevice @D-other\n@L", USES_HEURISTIC, 0},
    {"another format version", "clops-tune 2\ndevice @D\n@L", USES_HEURISTIC, 0},
    /* malformed lines are skipped one by one */
    {"garbage lines around",
     "clops-tune 1\ndevice @D\n\x01\x02 garbage\n\t\t\t\t\n@K not\ta\tline\n@Lmore garbage\t1\t2\n", USES_TUNED, 0},
    {"an overlong line first", "clops-tune 1\ndevice @D\n@X\t1\t1,1,1\t1\t1\n@L", USES_TUNED, 0},
    {"local size 0", "clops-tune 1\ndevice @D\n@K\t64\t0,16,1\t1\t1\n", USES_HEURISTIC, 0},
    {"chunk 0", "clops-tune 1\ndevice @D\n@K\t0\t1,16,1\t1\t1\n", USES_HEURISTIC, 0},
    {"chunk not a number", "clops-tune 1\ndevice @D\n@K\t64x\t1,16,1\t1\t1\n", USES_HEURISTIC, 0},
    {"local size past the device's", "clops-tune 1\ndevice @D\n@K\t64\t65536,1,1\t1\t1\n", LOCAL_REFUSED, 0},
    {"four fields", "clops-tune 1\ndevice @D\n@K\t64\t1,16,1\t1\n", USES_HEURISTIC, 0},
    {"four local sizes", "clops-tune 1\ndevice @D\n@K\t64\t1,16,1,1\t1\t1\n", USES_HEURISTIC, 0},
    {"truncated line", "clops-tune 1\ndevice @D\n@K\t64\t1,1", USES_HEURISTIC, 0},
    {"empty file", "", USES_HEURISTIC, 0},
};
#define TUNE_CASES (int)(sizeof tune_cases / sizeof tune_cases[0])

/* Appends `n` bytes to the text being built in out[0..size). */
static void append(char *out, size_t size, size_t *len, const char *s, size_t n)
{
    ck_assert_msg(*len + n < size, "test bug: tuning database text longer than %zu bytes", size);
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
}

/* A tune_case's text with its placeholders filled in. */
static void fill_text(const char *tmpl, const char *device, const char *key, const char *line, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *t = tmpl; *t; t++) {
        char buf[2100];
        const char *s = t;
        size_t n = 1;
        if (t[0] == '@' && t[1]) {
            switch (*++t) {
            case 'D':
                s = device;
                n = strlen(device);
                break;
            case 'K':
                s = key;
                n = strlen(key);
                break;
            case 'L':
                s = line;
                n = strlen(line);
                break;
            case 'X':
                n = sizeof buf - 1;
                memset(buf, 'x', n);
                s = buf;
                break;
            case 'R':
                n = 600;
                tc_fill_random((unsigned char *)buf, n, 3);
                for (size_t i = 0; i < n; i++)
                    buf[i] = buf[i] ? buf[i] : '\n';
                s = buf;
                break;
            default:
                ck_abort_msg("test bug: placeholder @%c", *t);
            }
        }
        append(out, size, &len, s, n);
    }
}

/* The test device profile of a discrete GPU (docs/conformance.md, "Device
 * profiles"): PoCL then plans the vector-rows kernels for 1- to 4-byte elements.
 * The vector-width tests set it themselves, so that the native run reaches those
 * kernels too; the suite's own profile (or none) is restored after each test by
 * a checked fixture, which runs also after a failed assertion. */
#define GPU_PROFILE "gpu,cu=132,wg=1024,local=256"
static char *g_profile_saved;

static void profile_save(void)
{
    const char *p = getenv("CLOPS_TEST_DEVICE_PROFILE");
    g_profile_saved = p ? strdup(p) : NULL;
}

static void profile_restore(void)
{
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", g_profile_saved);
    free(g_profile_saved);
    g_profile_saved = NULL;
}

/* Writes the database `tmpl` (fill_text) for CASE_T's variant and checks what
 * a new context makes of it: `expect`; for USES_TUNED chunk 64 and local size
 * 1,16,1, and where the untuned plan runs the vector-rows kernels, `vector_bytes`
 * per vector (0: the device class's, as untuned). `need_rows`: the untuned plan
 * must run them (the GPU profile is set). */
static void database_case(const char *label, const char *tmpl, int expect, int tune_off, unsigned vector_bytes,
                          int need_rows)
{
    /* the untuned choice, and the variant's key */
    setenv("CLOPS_TUNE", "off", 1);
    clops_context *ctx = new_ctx();
    const op_choice base = choose(ctx, &CASE_T, "untuned");
    ck_assert_str_eq(base.origin, "heuristic");
    ck_assert_msg(!need_rows || base.vector_bytes, "%s: the untuned plan runs no vector-rows kernel (options %s)",
                  label, base.options);
    unsetenv("CLOPS_TUNE");
    char path[PATH_MAX + 64];
    tune_file_path(ctx, path, sizeof path);
    char device[160];
    snprintf(device, sizeof device, "%s", clops_context_device_name(ctx));
    drop_ctx(ctx);

    static const size_t local[3] = {1, 16, 1};
    const unsigned chunk = 64;
    char line[CLOPS_OPTIONS_MAX + 64], text[8192];
    snprintf(line, sizeof line, "%s\t%u\t%zu,%zu,%zu\t12.500\t10.000\n", base.tune_key, chunk, local[0], local[1],
             local[2]);
    fill_text(tmpl, device, base.tune_key, line, text, sizeof text);
    if (tune_off)
        setenv("CLOPS_TUNE", "off", 1);
    write_all(path, text, strlen(text));
    ctx = new_ctx();
    const op_choice got = choose(ctx, &CASE_T, label);
    drop_ctx(ctx);
    if (expect == USES_TUNED) {
        expect_tuned(&got, chunk, local, base.vector_bytes && vector_bytes ? vector_bytes : base.vector_bytes, label);
    } else if (expect == LOCAL_REFUSED) {
        /* The scheduler picks its own local size (the line's chunk length, a
         * valid one, is still used). */
        ck_assert_msg(strcmp(got.origin, "heuristic") == 0 && memcmp(got.local, base.local, sizeof got.local) == 0,
                      "%s: local %zu,%zu,%zu (%s), want the heuristic's %zu,%zu,%zu", label, got.local[0],
                      got.local[1], got.local[2], got.origin, base.local[0], base.local[1], base.local[2]);
    } else {
        expect_heuristic(&got, &base, label);
    }
}

START_TEST(test_tune_database_file)
{
    const tune_case *tc = &tune_cases[_i];
    database_case(tc->name, tc->text, tc->expect, tc->tune_off, 0, 0);
}
END_TEST

/* The vector-bytes field of a database line (its 7th), for CASE_T's variant
 * (1-byte elements: widths of 2 to 16 bytes make 2 to 16 lanes), read under the
 * GPU profile; "@K\t64\t1,16,1\t12.5\t10\t" stands before each loop field. */
typedef struct width_case {
    const char *name, *text;
    int expect;
    unsigned vector_bytes; /* USES_TUNED: the width the operator runs (0: the device class's) */
    int tune_off;          /* CLOPS_TUNE=off while the context reads the file */
} width_case;

#define WIDTH_LINE "clops-tune 1\ndevice @D\n@K\t64\t1,16,1\t12.5\t10\t"
static const width_case width_cases[] = {
    {"vector width 8", WIDTH_LINE "0\t8\n", USES_TUNED, 8, 0},
    {"vector width 4, vectors loop", WIDTH_LINE "2\t4\n", USES_TUNED, 4, 0},
    {"vector width 2", WIDTH_LINE "0\t2\n", USES_TUNED, 2, 0},
    {"vector width 0: the class's", WIDTH_LINE "0\t0\n", USES_TUNED, 0, 0},
    {"an older line: no vector width", WIDTH_LINE "0\n", USES_TUNED, 0, 0},
    {"an older line: no loop, no vector width", "clops-tune 1\ndevice @D\n@L", USES_TUNED, 0, 0},
    {"a later version's field after the width", WIDTH_LINE "0\t8\tlater\n", USES_TUNED, 8, 0},
    {"a width 1-byte elements cannot take (64 lanes)", WIDTH_LINE "0\t64\n", USES_TUNED, 0, 0},
    {"vector width 3", WIDTH_LINE "0\t3\n", USES_HEURISTIC, 0, 0},
    {"vector width 1", WIDTH_LINE "0\t1\n", USES_HEURISTIC, 0, 0},
    {"vector width 256", WIDTH_LINE "0\t256\n", USES_HEURISTIC, 0, 0},
    {"vector width 8x", WIDTH_LINE "0\t8x\n", USES_HEURISTIC, 0, 0},
    {"vector width -8", WIDTH_LINE "0\t-8\n", USES_HEURISTIC, 0, 0},
    {"vector width past 64 bits", WIDTH_LINE "0\t18446744073709551624\n", USES_HEURISTIC, 0, 0},
    {"vector width 8, CLOPS_TUNE=off", WIDTH_LINE "0\t8\n", USES_HEURISTIC, 0, 1},
};
#define WIDTH_CASES (int)(sizeof width_cases / sizeof width_cases[0])

START_TEST(test_tune_vector_width_file)
{
    const width_case *wc = &width_cases[_i];
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", GPU_PROFILE);
    database_case(wc->name, wc->text, wc->expect, wc->tune_off, wc->vector_bytes, 1);
}
END_TEST

/* Every candidate vector width forced as the tuner forces it
 * (clops_operator_create_forced: the vectors loop, a chunk of 80 positions,
 * the width) under the GPU profile, for 1-, 2- and 4-byte elements (_i) at
 * blocks 2 and 4, DepthToSpace in DCR order and SpaceToDepth in CRD (the order
 * only renames channels; each is a program of its own to build): a width that
 * makes 2, 4, 8 or 16 lanes runs (-DVW=lanes), any other leaves the device
 * class's; the output is bit-exact against the reference, by execute_host and
 * on cl_mem. Rows of 149 positions (vector remainders, an element tail, several
 * vectors per work-item strided by the range), and network sizes: about 2
 * million elements, rows of 1000. */
/* One case of test_forced_vector_widths: each width forced on the case. */
static void forced_widths_case(clops_context *ctx, clops_data_type dt, uint32_t b, int s2d, int network)
{
    static const unsigned widths[] = {4, 8, 16, 32};
    const unsigned class_bytes = clops_device_params_of(ctx)->depth_space.vector_bytes;
    const unsigned es = (unsigned)clops_data_type_size(dt);
    const uint32_t deep[4] = {network ? 1 : 2, 2 * b * b, network ? 1024 / (b * b) : 3, network ? 1000 : 149};
    const uint32_t wide[4] = {deep[0], deep[1] / (b * b), deep[2] * b, deep[3] * b};
    char name[128];
    snprintf(name, sizeof name, "%s %u-byte b%u {%u, %u, %u, %u}", s2d ? "SpaceToDepth CRD" : "DepthToSpace DCR", es,
             b, deep[0], deep[1], deep[2], deep[3]);
    tc_case d = {name, s2d ? CLOPS_OPERATOR_SPACE_TO_DEPTH : CLOPS_OPERATOR_DEPTH_TO_SPACE, dt, {0, 0, 0, 0}, b,
                 s2d ? CLOPS_ORDER_COLUMN_ROW_DEPTH : CLOPS_ORDER_DEPTH_COLUMN_ROW, 0, {0, 0, 0, 0}};
    memcpy(d.in, s2d ? wide : deep, sizeof d.in);
    tc_prepared p;
    prepare_ok(&p, &d);
    for (int w = 0; w < 4; w++) {
        const clops_tuning force = {80, {0, 0, 0}, CLOPS_LOOP_VECTORS, widths[w]};
        char label[160];
        snprintf(label, sizeof label, "%s, %u bytes per vector forced", name, widths[w]);
        clops_operator *op = NULL;
        const clops_status st = clops_operator_create_forced(ctx, &p.desc, &force, &op);
        ck_assert_msg(st == CLOPS_SUCCESS && op, "%s: create: %s (%s)", label, clops_status_name(st),
                      clops_last_error_message());
        ck_assert_msg(!op->fallback && op->loop == CLOPS_LOOP_VECTORS, "%s: fallback %d, loop %d (%s)", label,
                      (int)op->fallback, (int)op->loop, op->options);
        const unsigned lanes = widths[w] / es;
        const int fits = widths[w] % es == 0 && (lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16);
        const unsigned want_bytes = fits ? widths[w] : class_bytes;
        char want[48];
        snprintf(want, sizeof want, "-DROWS=1 -DVW=%u ", want_bytes / es);
        ck_assert_msg(op->vector_bytes == want_bytes && strstr(op->options, want),
                      "%s: vector bytes %u, options %s; want %u bytes (%s)", label, op->vector_bytes, op->options,
                      want_bytes, want);
        run_and_compare(ctx, op, &p, label);
        clops_operator_free(op);
    }
    tc_release(&p);
}

START_TEST(test_forced_vector_widths)
{
    static const clops_data_type types[] = {CLOPS_DATA_TYPE_UINT8, CLOPS_DATA_TYPE_FLOAT16, CLOPS_DATA_TYPE_FLOAT32};
    tc_set_env("CLOPS_TEST_DEVICE_PROFILE", GPU_PROFILE);
    clops_context *ctx = new_ctx();
    for (uint32_t b = 2; b <= 4; b += 2)
        for (int s2d = 0; s2d < 2; s2d++)
            for (int network = 0; network < 2; network++)
                forced_widths_case(ctx, types[_i], b, s2d, network);
}
END_TEST

START_TEST(test_tune_refused)
{
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    clops_status st = clops_tune((unsigned)count, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_INVALID_DEVICE_SELECTION, "clops_tune(%zu of %zu devices): %s", count, count,
                  clops_status_name(st));
    st = clops_tune(UINT_MAX, 0, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_INVALID_DEVICE_SELECTION, "clops_tune(UINT_MAX): %s", clops_status_name(st));
    dir_scan s = scan_dir();
    ck_assert_msg(s.tunes == 0 && s.temps == 0 && s.entries == 0, "a refused tune left files");

    setenv("CLOPS_CACHE", "off", 1);
    st = clops_tune(0, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "clops_tune with CLOPS_CACHE=off: %s", clops_status_name(st));
    setenv("CLOPS_CACHE", "ro", 1);
    ck_assert(mkdir(g_dir, 0700) == 0);
    st = clops_tune(0, 1, NULL, NULL);
    ck_assert_msg(st == CLOPS_ERROR_CACHE_UNAVAILABLE, "clops_tune with CLOPS_CACHE=ro: %s", clops_status_name(st));
    s = scan_dir();
    ck_assert_msg(s.tunes == 0 && s.temps == 0 && s.entries == 0, "a refused tune left files");
}
END_TEST

/* ---- suite ---------------------------------------------------------------------------------------------------- */

static Suite *tuning_suite(void)
{
    Suite *s = suite_create("tuning");
    TCase *tc;
    tc = cache_case(s, "tuning");
    tcase_add_checked_fixture(tc, profile_save, profile_restore);
    tcase_add_loop_test(tc, test_tune_database_file, 0, TUNE_CASES);
    tcase_add_loop_test(tc, test_tune_vector_width_file, 0, WIDTH_CASES);
    tcase_add_loop_test(tc, test_forced_vector_widths, 0, 3);
    TC_TESTS(tc, test_tune_refused, test_tune_quick);
    return s;
}

int main(void)
{
    return cache_suite_main(tuning_suite());
}
