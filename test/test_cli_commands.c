/*
 * test_cli_commands.c - the `clops` commands' output: --help on every command,
 * `devices`, `print` (the spec's example and every type), --verbose and
 * --type bfloat16. Shared fixtures: cli_fixture.h.
 */
#define _XOPEN_SOURCE 700
#include "cli_fixture.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- help ------------------------------------------------------------------------------------ */

typedef struct help_case {
    const char *args[5];
    const char *want[6];
} help_case;

static const help_case help_cases[] = {
    {{"--help"}, {"usage: clops", "run depth-to-space", "run space-to-depth", "run max-unpooling", "devices", "print"}},
    {{"-h"}, {"usage: clops", "devices"}},
    {{"help"}, {"usage: clops"}},
    {{"run", "--help"}, {"usage: clops run", "depth-to-space", "max-unpooling"}},
    {{"run", "-h"}, {"usage: clops run"}},
    {{"run", "depth-to-space", "--help"},
     {"usage: clops run depth-to-space IN.npy OUT.npy --block-size B", "--order dcr|crd", "--device N|host",
      "--verbose", "--type bfloat16", "'<u2'"}},
    {{"run", "space-to-depth", "-h"}, {"usage: clops run space-to-depth IN.npy OUT.npy --block-size B", "--order"}},
    {{"run", "max-unpooling", "--help"},
     {"usage: clops run max-unpooling IN.npy INDICES.npy OUT.npy --output-shape N,C,H,W", "--device", "--verbose",
      "--type"}},
    {{"run", "depth-to-space", "x.npy", "--bogus", "--help"}, {"usage: clops run depth-to-space"}},
    {{"devices", "--help"}, {"usage: clops devices", "-h, --help"}},
    {{"print", "--help"}, {"usage: clops print FILE.npy", "--type bfloat16"}},
};
#define HELP_CASES (int)(sizeof(help_cases) / sizeof(help_cases[0]))

START_TEST(test_help)
{
    const help_case *c = &help_cases[_i];
    run_argv(c->args);
    ck_assert_msg(res.exit_code == 0, "help case %d: exit %d: %s", _i, res.exit_code, res.err);
    ck_assert_msg(res.err[0] == '\0', "help case %d wrote to stderr: %s", _i, res.err);
    for (int k = 0; k < 6 && c->want[k] != NULL; k++)
        ck_assert_msg(strstr(res.out, c->want[k]) != NULL, "help case %d lacks '%s':\n%s", _i, c->want[k], res.out);
}
END_TEST

/* ---- devices --------------------------------------------------------------------------------- */

static int starts_with(const char *line, const char *prefix)
{
    return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* The lines of 'clops devices', by prefix (the first that matches): each stands
 * per_device times a device plus `once` times, `exactly` or at least that often;
 * a line holds one of any[] (when given) and all of all[]. */
typedef struct device_line {
    const char *prefix;
    int per_device, once, exactly;
    const char *any[5], *all[3];
} device_line;

static const device_line device_lines[] = {
    {"platform ", 0, 1, 0, {NULL}, {NULL}},
    {"  device ", 0, 1, 0, {NULL}, {NULL}}, /* DEVICE_LINE: counts the devices */
    {"    type:", 1, 0, 1, {"CPU", "GPU", "ACCELERATOR", "CUSTOM", "OTHER"}, {NULL}},
    {"    OpenCL version:", 1, 0, 1, {NULL}, {NULL}},
    {"    OpenCL C version:", 1, 0, 1, {NULL}, {NULL}},
    {"    driver version:", 1, 0, 1, {NULL}, {NULL}},
    {"    fp16: ", 1, 0, 1, {NULL}, {"fp64: ", "int64: ", "compiler: "}},
    {"    max allocation:", 1, 0, 1, {NULL}, {NULL}},
    {"    plan:", 1, 0, 1, {NULL}, {NULL}},
    {"      - ", 4, 0, 0, {NULL}, {NULL}},
    {"    (CLOPS_DISABLE=", 0, 0, 0, {NULL}, {NULL}},
    {"host backend:", 0, 1, 1, {NULL}, {NULL}},
    {"default: ", 0, 1, 1, {"the first GPU", "is a CPU", "is not a CPU", "CLOPS_DEVICE=", "no OpenCL device"}, {NULL}},
    {"  (what run, bench, Python and clops.onnx use", 0, 1, 1, {NULL}, {NULL}},
};
#define DEVICE_LINES (int)(sizeof(device_lines) / sizeof(device_lines[0]))
#define DEVICE_LINE 1

/* Checks one line of 'clops devices' against its kind; returns the kind. */
static int check_device_line(const char *line)
{
    int k = 0;
    while (k < DEVICE_LINES && !starts_with(line, device_lines[k].prefix))
        k++;
    ck_assert_msg(k < DEVICE_LINES, "unexpected line in 'clops devices': %s", line);
    const device_line *d = &device_lines[k];
    int found = d->any[0] == NULL;
    for (int j = 0; j < 5 && d->any[j] != NULL; j++)
        found |= strstr(line, d->any[j]) != NULL;
    ck_assert_msg(found, "bad '%s' line: %s", d->prefix, line);
    for (int j = 0; j < 3 && d->all[j] != NULL; j++)
        ck_assert_msg(strstr(line, d->all[j]) != NULL, "bad '%s' line: %s", d->prefix, line);
    return k;
}

/* The default device (clops_default_device_for_host_data) is the one marked "(default)", or the host
 * backend's line says "the default", and the "default:" line names it. */
static void check_default_mark(const char *out)
{
    int host = 0;
    unsigned index = 0;
    clops_default_reason reason;
    ck_assert_int_eq(clops_default_device_for_host_data(&host, &index, &reason), CLOPS_SUCCESS);
    int marks = 0;
    for (const char *p = strstr(out, " (default)\n"); p != NULL; p = strstr(p + 1, " (default)\n"))
        marks++;
    const int host_marked = strstr(out, "host backend: always available (--device host), the default\n") != NULL;
    ck_assert_msg(marks + host_marked == 1, "%d devices and %d host lines marked the default:\n%s", marks,
                  host_marked, out);
    char want[96];
    if (host) {
        ck_assert_msg(host_marked, "the host backend is the default but not marked:\n%s", out);
        ck_assert_ptr_nonnull(strstr(out, "\ndefault: the host backend"));
    } else {
        snprintf(want, sizeof want, "\n  device %u: ", index);
        const char *line = strstr(out, want);
        ck_assert_msg(line != NULL && strstr(line, " (default)\n") == strchr(line + 1, '\n') - 10,
                      "device %u is the default but not marked:\n%s", index, out);
        snprintf(want, sizeof want, "\ndefault: device %u", index);
        ck_assert_msg(strstr(out, want) != NULL, "no '%s' line:\n%s", want + 1, out);
    }
    const char *why = reason == CLOPS_DEFAULT_REASON_CPU ? "the first device is a CPU"
                      : reason == CLOPS_DEFAULT_REASON_GPU ? "the first GPU"
                      : reason == CLOPS_DEFAULT_REASON_NOT_CPU ? "the first device is not a CPU"
                      : reason == CLOPS_DEFAULT_REASON_ENVIRONMENT ? "as CLOPS_DEVICE="
                                                                   : "no OpenCL device";
    ck_assert_msg(strstr(out, why) != NULL, "the reason '%s' is missing:\n%s", why, out);
}

START_TEST(test_devices)
{
    run("devices", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    if (!have_device) {
        ck_assert_str_eq(res.out, "no OpenCL devices (the host backend is always available)\n"
                                  "default: the host backend: no OpenCL device\n"
                                  "  (what run, bench, Python and clops.onnx use where no device is named; --device "
                                  "or CLOPS_DEVICE chooses another)\n");
        return;
    }
    check_default_mark(res.out);
    /* platform 0: NAME / device 0: NAME / type / versions / extensions / max allocation / plan / host */
    char *save = NULL;
    int count[DEVICE_LINES] = {0};
    for (char *line = strtok_r(res.out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
        count[check_device_line(line)]++;
    const int devices = count[DEVICE_LINE];
    for (int k = 0; k < DEVICE_LINES; k++) {
        const device_line *d = &device_lines[k];
        const int want = d->per_device * devices + d->once;
        ck_assert_msg(d->exactly ? count[k] == want : count[k] >= want, "%d lines '%s' for %d devices, want %s%d",
                      count[k], d->prefix, devices, d->exactly ? "" : "at least ", want);
    }
}
END_TEST

/* CLOPS_DEVICE moves the mark and says so; one naming no device leaves the list and says why; --json has
 * the default too. */
START_TEST(test_devices_default)
{
    const char *saved = getenv("CLOPS_DEVICE");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("CLOPS_DEVICE", "host", 1);
    run("devices", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.out, "default: the host backend, as CLOPS_DEVICE=host says\n") != NULL, "%s", res.out);
    if (have_device) {
        check_default_mark(res.out);
        setenv("CLOPS_DEVICE", "0", 1);
        run("devices", NULL);
        ck_assert_msg(strstr(res.out, " (default)\n") != NULL && strstr(res.out, "default: device 0, as CLOPS_DEVICE=0 says\n"),
                      "%s", res.out);
        check_default_mark(res.out);
        run("devices", "--json", NULL);
        ck_assert_msg(res.exit_code == 0 && strstr(res.out, "\"default\":") != NULL &&
                          strstr(res.out, "\"reason\":\t\"CLOPS_DEVICE\"") != NULL,
                      "%s", res.out);
    }
    setenv("CLOPS_DEVICE", "99", 1);
    run("devices", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    if (have_device)
        ck_assert_msg(strstr(res.out, "default: none: device 99 requested") != NULL && !strstr(res.out, "(default)") &&
                          !strstr(res.out, ", the default"),
                      "%s", res.out);
    if (keep) setenv("CLOPS_DEVICE", keep, 1);
    else unsetenv("CLOPS_DEVICE");
    free(keep);
    run("devices", "--json", NULL);
    ck_assert_msg(res.exit_code == 0 && strstr(res.out, "\"default\":") != NULL, "%s", res.out);
}
END_TEST

/* ---- print ----------------------------------------------------------------------------------- */

START_TEST(test_print_spec_output)
{
    run("print", "%D/dml_d2s_dcr_u32.npy", NULL);
    ck_assert_int_eq(res.exit_code, 0);
    ck_assert_str_eq(res.out, "[[[[ 0 18  1 19  2 20]\n"
                              "   [36 54 37 55 38 56]\n"
                              "   [ 3 21  4 22  5 23]\n"
                              "   [39 57 40 58 41 59]]\n"
                              "\n"
                              "  [[ 9 27 10 28 11 29]\n"
                              "   [45 63 46 64 47 65]\n"
                              "   [12 30 13 31 14 32]\n"
                              "   [48 66 49 67 50 68]]]]\n");
    /* Fortran order prints the same logical tensor */
    char c_order[CAPTURE_SIZE];
    run("print", "%D/dml_input_u32.npy", NULL);
    memcpy(c_order, res.out, sizeof c_order);
    run("print", "%D/dml_input_u32_fortran.npy", NULL);
    ck_assert_str_eq(res.out, c_order);
}
END_TEST

typedef struct print_case {
    const char *name;
    clops_data_type type;
    unsigned ndim;
    uint64_t shape[2];
    unsigned char data[32];
    size_t nbytes;
    int bfloat16;
    const char *want;
} print_case;

static const print_case print_cases[] = {
    {"b.npy", CLOPS_DATA_TYPE_BOOL, 1, {3, 0}, {1, 0, 1}, 3, 0, "[ True False  True]\n"},
    {"i8.npy", CLOPS_DATA_TYPE_INT8, 2, {2, 2}, {0x80, 0x7f, 0xff, 0}, 4, 0, "[[-128  127]\n [  -1    0]]\n"},
    {"u64.npy", CLOPS_DATA_TYPE_UINT64, 1, {1, 0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8, 0,
     "[18446744073709551615]\n"},
    {"f16.npy", CLOPS_DATA_TYPE_FLOAT16, 1, {5, 0}, {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x7c, 0x01, 0x00, 0x00, 0x80}, 10,
     0, "[   1.   -2.   inf 6e-08   -0.]\n"},
    {"bf16.npy", CLOPS_DATA_TYPE_BFLOAT16, 1, {2, 0}, {0xc0, 0x3f, 0x49, 0x40}, 4, 1, "[ 1.5 3.14]\n"},
    {"bf16u.npy", CLOPS_DATA_TYPE_BFLOAT16, 1, {2, 0}, {0xc0, 0x3f, 0x49, 0x40}, 4, 0, "[16320 16457]\n"},
    {"f32.npy", CLOPS_DATA_TYPE_FLOAT32, 1, {3, 0}, {0xcd, 0xcc, 0xcc, 0x3d, 0x00, 0x00, 0x20, 0x41, 0x00, 0x00, 0xc0, 0x7f},
     12, 0, "[0.1 10. nan]\n"},
    {"f64.npy", CLOPS_DATA_TYPE_FLOAT64, 1, {1, 0}, {0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f}, 8, 0, "[0.1]\n"},
    {"c64.npy", CLOPS_DATA_TYPE_COMPLEX64, 1, {2, 0},
     {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x60, 0x40, 0x00, 0x00, 0x80, 0xbf}, 16, 0,
     "[ 1.+2.j 3.5-1.j]\n"},
    {"scalar.npy", CLOPS_DATA_TYPE_INT32, 0, {0, 0}, {7, 0, 0, 0}, 4, 0, "7\n"},
    {"empty.npy", CLOPS_DATA_TYPE_INT32, 2, {0, 3}, {0}, 0, 0, "[]\n"},
};
#define PRINT_CASES (int)(sizeof(print_cases) / sizeof(print_cases[0]))

START_TEST(test_print_types)
{
    const print_case *c = &print_cases[_i];
    make_array(c->name, c->type, c->ndim, c->shape, c->data, c->nbytes);
    char arg[64];
    snprintf(arg, sizeof arg, "%%T/%s", c->name);
    if (c->bfloat16)
        run("print", arg, "--type", "bfloat16", NULL);
    else
        run("print", arg, NULL);
    ck_assert_msg(res.exit_code == 0, "%s: exit %d: %s", c->name, res.exit_code, res.err);
    ck_assert_str_eq(res.out, c->want);
}
END_TEST

/* ---- --verbose and --type bfloat16 --------------------------------------------------------------- */

START_TEST(test_verbose)
{
    const char *device = _i == 0 ? "host" : NULL;
    if (device != NULL)
        run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/v.npy", "--block-size", "2", "--verbose", "--device",
            device, NULL);
    else
        run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/v.npy", "--block-size", "2", "--verbose", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    ck_assert_ptr_nonnull(strstr(res.err, "clops: device: "));
    ck_assert_ptr_nonnull(strstr(res.err, "clops: kernel: "));
    ck_assert_ptr_nonnull(strstr(res.err, "{1, 8, 2, 3} -> {1, 2, 4, 6}"));
    /* No device named: a CPU default device gives way to the host backend (issue 33). */
    int is_host = 0;
    unsigned index = 0;
    size_t count = 0;
    clops_device_info infos[16];
    const bool cpu_default = clops_default_device(&is_host, &index) == CLOPS_SUCCESS && !is_host &&
                             clops_device_list(infos, 16, &count) == CLOPS_SUCCESS && index < count && index < 16 &&
                             (infos[index].type & CL_DEVICE_TYPE_CPU);
    if (device != NULL || cpu_default) {
        ck_assert_msg(strstr(res.err, "clops: device: host") != NULL, "%s", res.err);
        ck_assert_ptr_nonnull(strstr(res.err, "clops: backend: host"));
    } else if (strstr(res.err, "clops: backend: opencl") != NULL) {
        ck_assert_ptr_nonnull(strstr(res.err, "clops: global work size: "));
        ck_assert_ptr_nonnull(strstr(res.err, "clops: local work size: "));
        ck_assert_ptr_nonnull(strstr(res.err, "clops: build options: "));
    } else {
        ck_assert_ptr_nonnull(strstr(res.err, "clops: backend: host"));
    }
    ck_assert_str_eq(res.out, "");
    char out[512];
    tmp_path(out, sizeof out, "v.npy");
    unlink(out);
}
END_TEST

START_TEST(test_bfloat16_run)
{
    /* 1x4x1x1 bfloat16 bits in a '<u2' file; DepthToSpace block 2 gives 1x1x2x2 */
    uint16_t bits[4] = {0x3f80, 0x4000, 0x4040, 0x7fc1}; /* 1, 2, 3, a NaN with payload */
    uint64_t shape[4] = {1, 4, 1, 1};
    make_array("bf_in.npy", CLOPS_DATA_TYPE_UINT16, 4, shape, bits, sizeof bits);
    const char *device = _i == 0 ? "host" : NULL;
    if (device != NULL)
        run("run", "depth-to-space", "%T/bf_in.npy", "%T/bf_out.npy", "--block-size", "2", "--type", "bfloat16",
            "--device", device, NULL);
    else
        run("run", "depth-to-space", "%T/bf_in.npy", "%T/bf_out.npy", "--block-size", "2", "--type", "bfloat16", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    char path[512], msg[NPY_MESSAGE_SIZE];
    tmp_path(path, sizeof path, "bf_out.npy");
    npy_array a;
    ck_assert_msg(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg) == NPY_OK, "%s", msg);
    ck_assert_str_eq(a.descr, "<u2"); /* bfloat16 is written as '<u2' */
    ck_assert_uint_eq(a.ndim, 4);
    ck_assert_uint_eq(a.shape[1], 1);
    ck_assert_uint_eq(a.shape[2], 2);
    ck_assert_uint_eq(a.shape[3], 2);
    ck_assert_mem_eq(a.data, bits, sizeof bits); /* DCR with one output channel keeps the order */
    npy_free(&a);
    run("print", "%T/bf_out.npy", "--type", "bfloat16", NULL);
    ck_assert_str_eq(res.out, "[[[[ 1.  2.]\n   [ 3. nan]]]]\n");
    unlink(path);
}
END_TEST

/* ---- suite -------------------------------------------------------------------------------------- */

/* ---- cache list and import ----------------------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)data)[i]) * 0x100000001b3ull;
    return h;
}

/* `cache list` escapes what a pack's key says (a device name with terminal escape
 * sequences) before it reaches the terminal; `cache import` of a missing file
 * says so, not "not a pack". */
START_TEST(test_cache_list_escapes)
{
    char dir[512], entry[600];
    tmp_path(dir, sizeof dir, "cache-escapes");
    mkdir(dir, 0700);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    static const char key[] = "clops-cache-format 1\nclops 0\ndevice: \x1b[2J\x1b]0;pwned\x07" "Evil\x7f\n"
                              "options: -DX=1\nsource:\n";
    const size_t klen = sizeof key - 1;
    unsigned char file[32 + sizeof key + 4];
    memcpy(file, "CLOPSBIN", 8);
    put_le(file + 8, 1, 4);
    put_le(file + 12, klen, 4);
    put_le(file + 16, 4, 8);
    memcpy(file + 32, key, klen);
    memcpy(file + 32 + klen, "\x1b\x1b\x1b\x1b", 4);
    put_le(file + 24, fnv1a(fnv1a(0xcbf29ce484222325ull, key, klen), file + 32 + klen, 4), 8);
    snprintf(entry, sizeof entry, "%s/00000000000000aa.bin", dir);
    write_bytes(entry, file, 32 + klen + 4);
    run("cache", "list", NULL);
    ck_assert_msg(res.exit_code == 0, "cache list: exit %d: %s", res.exit_code, res.err);
    ck_assert_msg(strchr(res.out, 0x1b) == NULL && strchr(res.out, 0x07) == NULL && strchr(res.out, 0x7f) == NULL,
                  "cache list printed a control byte: %s", res.out);
    ck_assert_msg(strstr(res.out, "\\x1b[2J\\x1b]0;pwned\\x07Evil\\x7f") != NULL, "cache list: %s", res.out);

    run("cache", "import", "%T/no-such.pack", NULL);
    ck_assert_int_eq(res.exit_code, 1);
    ck_assert_msg(strstr(res.err, "No such file or directory") && strstr(res.err, "CLOPS_ERROR_CACHE_IO"),
                  "cache import of a missing file: %s", res.err);
    unlink(entry);
    rmdir(dir);
    unsetenv("CLOPS_CACHE_DIR");
}
END_TEST

/* Issue 32 P5: `cache import` of a pack holding one entry (for a device this
 * machine does not have) 1,000 times, into an empty cache, said "skipped 999
 * already in the cache". The 999 are duplicates within the pack. */
/* `clops conformance` shows its per-group progress only on a terminal or for a
 * slow or failed group: a quick host run into a pipe prints none (issue 33). */
START_TEST(test_conformance_quiet_progress)
{
    run("conformance", "--device", "host", "--quick", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.out, " passed, 0 failed") != NULL, "stdout: %s", res.out);
    /* On a pipe only a group that took over a second prints (a loaded machine makes some slow), and its
     * line ends with the time it took: a line without one is a quick group's progress. */
    for (const char *line = strstr(res.err, "conformance: host: ["); line; line = strstr(line + 1, "conformance: host: [")) {
        const char *end = strchr(line, '\n');
        ck_assert_msg(end && end - line > 3 && memcmp(end - 3, " s)", 3) == 0, "a quick group's progress line on a pipe: %s",
                      res.err);
    }
}
END_TEST

START_TEST(test_cache_import_pack_duplicates)
{
    enum { N = 1000 };
    char dir[512], pack[512];
    tmp_path(dir, sizeof dir, "cache-import-dups");
    tmp_path(pack, sizeof pack, "dups.pack");
    mkdir(dir, 0700);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    static const char key[] = "clops-cache-format 1\nclops 0.0.0\nanother device, test_cli_commands\n";
    static const unsigned char payload[4] = {1, 2, 3, 4};
    const size_t klen = sizeof key - 1, elen = 32 + klen + sizeof payload;
    unsigned char *p = malloc(16 + N * (8 + elen));
    ck_assert(p != NULL);
    memcpy(p, "CLOPSPAK", 8);
    put_le(p + 8, N, 8);
    unsigned char *e = p + 16;
    for (int i = 0; i < N; i++, e += 8 + elen) {
        put_le(e, elen, 8);
        memcpy(e + 8, "CLOPSBIN", 8);
        put_le(e + 16, 1, 4);
        put_le(e + 20, klen, 4);
        put_le(e + 24, sizeof payload, 8);
        put_le(e + 32, fnv1a(fnv1a(0xcbf29ce484222325ull, key, klen), payload, sizeof payload), 8);
        memcpy(e + 40, key, klen);
        memcpy(e + 40 + klen, payload, sizeof payload);
    }
    write_bytes(pack, p, (size_t)(e - p));
    free(p);
    run("cache", "import", pack, NULL);
    ck_assert_msg(res.exit_code == 0, "cache import: exit %d: %s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.out, "imported 0 of 1000 entries") && strstr(res.out, "skipped 999 duplicates within the pack") &&
                      strstr(res.out, "skipped 1 for a device") && !strstr(res.out, "already in the cache"),
                  "cache import: %s", res.out);
    unlink(pack);
    rmdir(dir);
    unsetenv("CLOPS_CACHE_DIR");
}
END_TEST

/* A device without a compiler whose cache holds neither program: the run goes to the host and says
 * so once on stderr, with how to add the portable program; with a device that could run it, nothing. */
START_TEST(test_missing_program_said)
{
    if (!have_device) {
        tc_skip("missing_program_said", "no OpenCL device");
        return;
    }
    char cache[300];
    tmp_path(cache, sizeof cache, "empty-cache");
    setenv("CLOPS_CACHE_DIR", cache, 1);
    setenv("CLOPS_DISABLE", "compiler", 1);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/m.npy", "--block-size", "2", "--device", "0", NULL);
    unsetenv("CLOPS_DISABLE");
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    const char *said = strstr(res.err, "clops: the operator runs on the host");
    ck_assert_msg(said && strstr(said, "portable.cl with \"-cl-std=CL1.2\"") &&
                      strstr(said, "clops kernels list --device N --portable"),
                  "stderr should name the missing programs and how to add one: %s", res.err);
    ck_assert_msg(strstr(said + 1, "clops: the operator runs on the host") == NULL, "said twice: %s", res.err);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/m.npy", "--block-size", "2", "--device", "0", NULL);
    unsetenv("CLOPS_CACHE_DIR");
    ck_assert_msg(res.exit_code == 0 && res.err[0] == '\0', "with a compiler: exit %d, stderr %s", res.exit_code,
                  res.err);
}
END_TEST

static Suite *cli_commands_suite(void)
{
    Suite *s = suite_create("cli_commands");
    TCase *tc = cli_case(s);
    tcase_add_loop_test(tc, test_help, 0, HELP_CASES);
    TC_TESTS(tc, test_devices, test_devices_default, test_print_spec_output);
    tcase_add_loop_test(tc, test_print_types, 0, PRINT_CASES);
    tcase_add_loop_test(tc, test_verbose, 0, 2);
    tcase_add_loop_test(tc, test_bfloat16_run, 0, 2);
    tcase_add_test(tc, test_cache_list_escapes);
    tcase_add_test(tc, test_cache_import_pack_duplicates);
    tcase_add_test(tc, test_conformance_quiet_progress);
    tcase_add_test(tc, test_missing_program_said);
    return s;
}

int main(void)
{
    return cli_suite_main(cli_commands_suite());
}
