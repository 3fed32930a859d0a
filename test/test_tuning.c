/*
 * test_tuning.c - the tuning database: the file clops_tune writes, what a
 * context reads back from it (and what it refuses), and a quick tuning run.
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
#include "reference.h"
#include "test_fs.h"

/* ---- tuning database ------------------------------------------------------------------------------------------ */

/* The case's operator: its local size, origin and build options. */
typedef struct op_choice {
    char origin[16];
    size_t local[3];
    char options[CLOPS_OPTIONS_MAX];
    char tune_key[CLOPS_OPTIONS_MAX];
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

static void expect_tuned(const op_choice *got, unsigned chunk, const size_t local[3], const char *label)
{
    ck_assert_msg(strcmp(got->origin, "tuned") == 0, "%s: local_size_origin \"%s\", want \"tuned\"", label,
                  got->origin);
    ck_assert_msg(memcmp(got->local, local, 3 * sizeof local[0]) == 0, "%s: local %zu,%zu,%zu, want tuned %zu,%zu,%zu",
                  label, got->local[0], got->local[1], got->local[2], local[0], local[1], local[2]);
    char want[32];
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
    int lines = 0;
    for (const char *q = text; *q; q++)
        lines += *q == '\n';
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
            expect_tuned(&got, r->chunk, r->local, name);
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

START_TEST(test_tune_database_file)
{
    const tune_case *tc = &tune_cases[_i];
    const char *label = tc->name;
    /* the untuned choice, and the variant's key */
    setenv("CLOPS_TUNE", "off", 1);
    clops_context *ctx = new_ctx();
    const op_choice base = choose(ctx, &CASE_T, "untuned");
    ck_assert_str_eq(base.origin, "heuristic");
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
    fill_text(tc->text, device, base.tune_key, line, text, sizeof text);
    if (tc->tune_off)
        setenv("CLOPS_TUNE", "off", 1);
    write_all(path, text, strlen(text));
    ctx = new_ctx();
    const op_choice got = choose(ctx, &CASE_T, label);
    drop_ctx(ctx);
    if (tc->expect == USES_TUNED) {
        expect_tuned(&got, chunk, local, label);
    } else if (tc->expect == LOCAL_REFUSED) {
        /* The scheduler picks its own local size (the line's chunk length, a
         * valid one, is still used). */
        ck_assert_msg(strcmp(got.origin, "heuristic") == 0 && memcmp(got.local, base.local, sizeof got.local) == 0,
                      "%s: local %zu,%zu,%zu (%s), want the heuristic's %zu,%zu,%zu", label, got.local[0],
                      got.local[1], got.local[2], got.origin, base.local[0], base.local[1], base.local[2]);
    } else {
        expect_heuristic(&got, &base, label);
    }
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
    tcase_add_loop_test(tc, test_tune_database_file, 0, TUNE_CASES);
    TC_TESTS(tc, test_tune_refused, test_tune_quick);
    return s;
}

int main(void)
{
    return cache_suite_main(tuning_suite());
}
