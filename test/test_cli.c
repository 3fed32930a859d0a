/*
 * test_cli.c - the `clops` command end to end.
 *
 * Runs the binary named by CLOPS_CLI (set by ctest) with posix_spawn, stdout and
 * stderr captured in files, on the fixtures in CLOPS_TEST_DATA:
 *   - the DirectML and ONNX examples of DepthToSpace (DCR and CRD), SpaceToDepth
 *     back, and MaxUnpooling, on --device host and on the default device; output
 *     files compared byte for byte with the expected fixtures (which are in
 *     numpy.save()'s exact layout) and value by value;
 *   - Fortran-order inputs give the C-order results;
 *   - usage errors exit 2 with a message; file and operator errors exit 1 with
 *     one "clops: error: ..." line; no output file and no temporary file is left
 *     behind (also for MaxUnpooling's out-of-range index).
 * --help, `devices`, `print`, --verbose and --type bfloat16: test_cli_commands.c.
 */
#define _DEFAULT_SOURCE
#include "cli_fixture.h"
#include "conformance_spec.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the spec's examples --------------------------------------------------------------------- */

typedef struct run_case {
    const char *name;
    const char *args[8]; /* after "run"; OUT is %T/out.npy */
    const char *expected;
} run_case;

static const run_case run_cases[] = {
    {"DirectML DepthToSpace DCR (default order)",
     {"depth-to-space", "%D/dml_input_u32.npy", "%T/out.npy", "--block-size", "2"},
     "dml_d2s_dcr_u32.npy"},
    {"DirectML DepthToSpace DCR",
     {"depth-to-space", "%D/dml_input_u32.npy", "%T/out.npy", "--block-size", "2", "--order", "dcr"},
     "dml_d2s_dcr_u32.npy"},
    {"DirectML DepthToSpace CRD",
     {"depth-to-space", "%D/dml_input_u32.npy", "%T/out.npy", "--block-size=2", "--order=crd"},
     "dml_d2s_crd_u32.npy"},
    {"DirectML DepthToSpace DCR, Fortran-order input",
     {"depth-to-space", "%D/dml_input_u32_fortran.npy", "%T/out.npy", "--block-size", "2"},
     "dml_d2s_dcr_u32.npy"},
    {"DirectML DepthToSpace CRD, Fortran-order input",
     {"depth-to-space", "%D/dml_input_u32_fortran.npy", "%T/out.npy", "--order", "crd", "--block-size", "2"},
     "dml_d2s_crd_u32.npy"},
    {"ONNX DepthToSpace DCR (float)",
     {"depth-to-space", "%D/onnx_input_f32.npy", "%T/out.npy", "--block-size", "2"},
     "onnx_d2s_dcr_f32.npy"},
    {"ONNX DepthToSpace CRD (float)",
     {"depth-to-space", "%D/onnx_input_f32.npy", "%T/out.npy", "--block-size", "2", "--order", "crd"},
     "onnx_d2s_crd_f32.npy"},
    {"SpaceToDepth DCR undoes DepthToSpace DCR",
     {"space-to-depth", "%D/dml_d2s_dcr_u32.npy", "%T/out.npy", "--block-size", "2"},
     "dml_input_u32.npy"},
    {"SpaceToDepth CRD undoes DepthToSpace CRD",
     {"space-to-depth", "%D/dml_d2s_crd_u32.npy", "%T/out.npy", "--block-size", "2", "--order", "crd"},
     "dml_input_u32.npy"},
    {"SpaceToDepth DCR, Fortran-order input",
     {"space-to-depth", "%D/dml_d2s_dcr_u32_fortran.npy", "%T/out.npy", "--block-size", "2"},
     "dml_input_u32.npy"},
    {"SpaceToDepth block 1 is a copy",
     {"space-to-depth", "%D/onnx_input_f32.npy", "%T/out.npy", "--block-size", "1"},
     "onnx_input_f32.npy"},
    {"MaxUnpooling, INT64 indices",
     {"max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_i64.npy", "%T/out.npy", "--output-shape",
      "1,2,4,4"},
     "unpool_expected_f32.npy"},
    {"MaxUnpooling, UINT32 indices",
     {"max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_u32.npy", "%T/out.npy",
      "--output-shape=1,2,4,4"},
     "unpool_expected_f32.npy"},
    /* ONNX's test_maxunpool_export_with_output_shape: ONNX Runtime's answer, not ONNX's reference
     * data (docs/semantics.md; test_onnx_unpool_readings). */
    {"ONNX MaxUnpool with output_shape (1,1,5,5), ONNX Runtime's reading",
     {"max-unpooling", "%D/onnx_unpool_input_f32.npy", "%D/onnx_unpool_indices_i64.npy", "%T/out.npy",
      "--output-shape", "1,1,5,5"},
     "onnx_unpool_ort_f32.npy"},
};
#define RUN_CASES (int)(sizeof(run_cases) / sizeof(run_cases[0]))
#define DEVICE_VARIANTS 2 /* --device host, then the default device */

START_TEST(test_spec_examples)
{
    const run_case *c = &run_cases[_i / DEVICE_VARIANTS];
    int host = _i % DEVICE_VARIANTS == 0;
    char label[256], out[512], want[512];
    snprintf(label, sizeof label, "%s [%s]", c->name, host ? "--device host" : "default device");
    const char *args[16] = {"run"};
    int n = 1;
    for (int i = 0; i < 8 && c->args[i] != NULL; i++)
        args[n++] = c->args[i];
    if (host) {
        args[n++] = "--device";
        args[n++] = "host";
    }
    args[n] = NULL;
    tmp_path(out, sizeof out, "out.npy");
    unlink(out);
    run_argv(args);
    ck_assert_msg(res.exit_code == 0, "%s: exit %d, stderr: %s", label, res.exit_code, res.err);
    ck_assert_msg(res.err[0] == '\0', "%s: unexpected stderr: %s", label, res.err);
    ck_assert_msg(res.out[0] == '\0', "%s: unexpected stdout: %s", label, res.out);
    snprintf(want, sizeof want, "%s/%s", data_dir, c->expected);
    assert_same_npy(out, want, label);
    unlink(out);
    assert_no_temp_files();
}
END_TEST

/* ONNX's test_maxunpool_export_with_output_shape, X = [[5,6],[7,8]], I = [[5,7],[13,15]] into
 * (1,1,5,5): clops (test_spec_examples) gives ONNX Runtime's reading, I flat over the 5x5 plane;
 * ONNX's reference data reads I flat over the 4x4 plane kernel and strides give, in the 5x5 output's
 * top-left corner. The two fixtures hold exactly those placements, as docs/semantics.md states them. */
START_TEST(test_onnx_unpool_readings)
{
    static const struct { const char *file; int at[4]; } readings[2] = {
        {"onnx_unpool_ort_f32.npy", {5, 7, 13, 15}},           /* (1,0) (1,2) (2,3) (3,0) */
        {"onnx_unpool_onnx_reference_f32.npy", {6, 8, 16, 18}} /* (1,1) (1,3) (3,1) (3,3) */
    };
    for (int r = 0; r < 2; r++) {
        char path[512], msg[NPY_MESSAGE_SIZE];
        snprintf(path, sizeof path, "%s/%s", data_dir, readings[r].file);
        npy_array a;
        ck_assert_msg(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg) == NPY_OK, "%s", msg);
        ck_assert_int_eq(a.data_type, CLOPS_DATA_TYPE_FLOAT32);
        ck_assert_uint_eq(a.count, 25);
        float want[25] = {0};
        for (int k = 0; k < 4; k++) want[readings[r].at[k]] = 5.0f + (float)k;
        ck_assert_msg(memcmp(a.data, want, sizeof want) == 0, "%s: not the reading docs/semantics.md states",
                      readings[r].file);
        npy_free(&a);
    }
}
END_TEST

/* The expected fixtures hold the values printed in the DirectML specification
 * (conformance_spec.h). */
START_TEST(test_fixtures_match_spec)
{
    const char *names[2] = {"dml_d2s_dcr_u32.npy", "dml_d2s_crd_u32.npy"};
    const uint32_t *want[2] = {conf_spec_dcr, conf_spec_crd};
    for (int k = 0; k < 2; k++) {
        char path[512], msg[NPY_MESSAGE_SIZE];
        snprintf(path, sizeof path, "%s/%s", data_dir, names[k]);
        npy_array a;
        ck_assert_msg(npy_read(path, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg) == NPY_OK, "%s", msg);
        ck_assert_int_eq(a.data_type, CLOPS_DATA_TYPE_UINT32);
        ck_assert_uint_eq(a.count, CONF_SPEC_COUNT);
        ck_assert_mem_eq(a.data, want[k], sizeof conf_spec_dcr);
        npy_free(&a);
    }
}
END_TEST

/* Collects the integers of the first "[[[[ ... ]]]]" block after `anchor` in text. */
static size_t spec_block(const char *text, const char *anchor, uint32_t *values, size_t cap)
{
    const char *p = strstr(text, anchor);
    ck_assert_msg(p != NULL, "spec: '%s' not found", anchor);
    p = strstr(p, "[[[[");
    ck_assert_ptr_nonnull(p);
    const char *end = strstr(p, "]]]]");
    ck_assert_ptr_nonnull(end);
    size_t n = 0;
    while (p < end) {
        if (*p >= '0' && *p <= '9') {
            char *next;
            unsigned long v = strtoul(p, &next, 10);
            ck_assert_uint_lt(n, cap);
            values[n++] = (uint32_t)v;
            p = next;
        } else {
            p++;
        }
    }
    return n;
}

/* The fixtures against the published page itself (../shared/spec), when it is there. */
START_TEST(test_fixtures_match_spec_text)
{
    const char *spec = getenv("CLOPS_SPEC_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/dml_depth_to_space1.txt", spec != NULL ? spec : "");
    if (spec == NULL || !file_exists(path)) {
        fprintf(stderr, "note: %s not found; fixtures checked against the typed-in values only\n", path);
        return;
    }
    size_t len;
    char *text = (char *)slurp(path, &len);
    text[len] = '\0';
    static const struct {
        const char *anchor, *fixture;
    } blocks[] = {{"InputTensor: (Sizes:{1, 8, 2, 3}", "dml_input_u32.npy"},
                  {"Example 1.", "dml_d2s_dcr_u32.npy"},
                  {"Example 2.", "dml_d2s_crd_u32.npy"}};
    for (int k = 0; k < 3; k++) {
        uint32_t want[64];
        size_t n = spec_block(text, blocks[k].anchor, want, 64);
        ck_assert_uint_eq(n, 48);
        char fixture[512], msg[NPY_MESSAGE_SIZE];
        snprintf(fixture, sizeof fixture, "%s/%s", data_dir, blocks[k].fixture);
        npy_array a;
        ck_assert_msg(npy_read(fixture, CLOPS_DATA_TYPE_UNKNOWN, &a, msg, sizeof msg) == NPY_OK, "%s", msg);
        ck_assert_uint_eq(a.count, 48);
        ck_assert_mem_eq(a.data, want, 48 * sizeof(uint32_t));
        npy_free(&a);
    }
    free(text);
}
END_TEST

START_TEST(test_device_index)
{
    char out[512];
    tmp_path(out, sizeof out, "out.npy");
    unlink(out);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/out.npy", "--block-size", "2", "--device", "0", NULL);
    if (have_device) {
        ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
        char want[512];
        snprintf(want, sizeof want, "%s/dml_d2s_dcr_u32.npy", data_dir);
        assert_same_npy(out, want, "--device 0");
        unlink(out);
    } else {
        ck_assert_int_eq(res.exit_code, 1);
        ck_assert_ptr_nonnull(strstr(res.err, "CLOPS_ERROR_INVALID_DEVICE_SELECTION"));
        ck_assert(!file_exists(out));
    }
}
END_TEST

/* ---- MaxUnpooling with an out-of-range index ------------------------------------------------- */

START_TEST(test_unpool_index_out_of_range)
{
    char out[512];
    tmp_path(out, sizeof out, "unpool_out.npy");
    const char *device = _i == 0 ? "host" : NULL;
    unlink(out);
    if (device != NULL)
        run("run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_bad_i64.npy",
            "%T/unpool_out.npy", "--output-shape", "1,2,4,4", "--device", device, NULL);
    else
        run("run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_bad_i64.npy",
            "%T/unpool_out.npy", "--output-shape", "1,2,4,4", NULL);
    ck_assert_msg(res.exit_code == 1, "exit %d: %s", res.exit_code, res.err);
    assert_error_line("out-of-range index");
    ck_assert_ptr_nonnull(strstr(res.err, "CLOPS_ERROR_INDEX_OUT_OF_RANGE"));
    ck_assert_msg(!file_exists(out), "an output file was left behind");
    assert_no_temp_files();

    /* an existing output file is left as it was */
    write_bytes(out, "previous", 8);
    run("run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_bad_i64.npy", "%T/unpool_out.npy",
        "--output-shape", "1,2,4,4", "--device", device != NULL ? device : "host", NULL);
    ck_assert_int_eq(res.exit_code, 1);
    size_t len;
    unsigned char *bytes = slurp(out, &len);
    ck_assert_uint_eq(len, 8);
    ck_assert_mem_eq(bytes, "previous", 8);
    free(bytes);
    unlink(out);
    assert_no_temp_files();
}
END_TEST

/* An output path that is a FIFO nobody reads is refused at once (no hang), never
 * replaced; a directory is refused. */
START_TEST(test_output_not_regular)
{
    char fifo[512];
    tmp_path(fifo, sizeof fifo, "out.fifo");
    unlink(fifo);
    ck_assert_msg(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/out.fifo", "--block-size", "2", "--device", "host",
        NULL);
    ck_assert_msg(res.exit_code == 1, "exit %d: %s", res.exit_code, res.err);
    assert_error_line("output is a FIFO without a reader");
    ck_assert_ptr_nonnull(strstr(res.err, "a FIFO that no process is reading"));
    struct stat st;
    ck_assert_msg(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    unlink(fifo);

    char dir[512];
    tmp_path(dir, sizeof dir, "out.dir");
    ck_assert_msg(mkdir(dir, 0700) == 0, "mkdir: %s", strerror(errno));
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/out.dir", "--block-size", "2", "--device", "host",
        NULL);
    ck_assert_msg(res.exit_code == 1, "exit %d: %s", res.exit_code, res.err);
    ck_assert_ptr_nonnull(strstr(res.err, "it is a directory: it is not replaced"));
    ck_assert_msg(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "the directory was replaced");
    rmdir(dir);
    assert_no_temp_files();
}
END_TEST

/* A character device is written in place: /dev/null works and stays a device;
 * /dev/full's "no space" is reported. */
START_TEST(test_output_device)
{
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "/dev/null", "--block-size", "2", "--device", "host", NULL);
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    struct stat st;
    ck_assert_msg(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is no longer a device");
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
        run("run", "depth-to-space", "%D/dml_input_u32.npy", "/dev/full", "--block-size", "2", "--device", "host",
            NULL);
        ck_assert_msg(res.exit_code == 1, "exit %d: %s", res.exit_code, res.err);
        ck_assert_ptr_nonnull(strstr(res.err, "No space left on device"));
        ck_assert_msg(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full was replaced");
    }
}
END_TEST

/* A FIFO with a reader receives the whole .npy file, byte for byte what a
 * regular output gets. */
START_TEST(test_output_fifo_reader)
{
    char fifo[512], regular[512];
    tmp_path(fifo, sizeof fifo, "reader.fifo");
    tmp_path(regular, sizeof regular, "regular.npy");
    unlink(fifo);
    ck_assert_msg(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
    int pipefd[2];
    ck_assert(pipe(pipefd) == 0);
    const pid_t reader = fork();
    ck_assert(reader >= 0);
    if (reader == 0) { /* reads the FIFO to its end and sends the bytes back */
        close(pipefd[0]);
        const int fd = open(fifo, O_RDONLY);
        char buf[4096];
        ssize_t r;
        while (fd >= 0 && (r = read(fd, buf, sizeof buf)) > 0)
            if (write(pipefd[1], buf, (size_t)r) != r) _exit(1);
        _exit(fd >= 0 ? 0 : 1);
    }
    close(pipefd[1]);
    /* the reader may not have opened the FIFO yet: then clops refuses at once and we try again */
    for (int attempt = 0; attempt < 500; attempt++) {
        run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/reader.fifo", "--block-size", "2", "--device",
            "host", NULL);
        if (res.exit_code == 0 || !strstr(res.err, "no process is reading")) break;
        usleep(10000);
    }
    ck_assert_msg(res.exit_code == 0, "exit %d: %s", res.exit_code, res.err);
    unsigned char got[65536];
    size_t got_len = 0;
    ssize_t r;
    while ((r = read(pipefd[0], got + got_len, sizeof got - got_len)) > 0) got_len += (size_t)r;
    close(pipefd[0]);
    int status;
    ck_assert(waitpid(reader, &status, 0) == reader && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/regular.npy", "--block-size", "2", "--device", "host",
        NULL);
    ck_assert_int_eq(res.exit_code, 0);
    size_t want_len;
    unsigned char *want = slurp(regular, &want_len);
    ck_assert_msg(got_len == want_len && memcmp(got, want, want_len) == 0, "the FIFO's reader got %zu bytes, want %zu",
                  got_len, want_len);
    free(want);
    unlink(regular);
    unlink(fifo);
    assert_no_temp_files();
}
END_TEST

/* Replacing an output keeps its permission bits (0600 stays 0600); a symbolic
 * link stays a link to the new file. */
START_TEST(test_output_keeps_mode)
{
    char out[512], link_path[512];
    tmp_path(out, sizeof out, "private.npy");
    tmp_path(link_path, sizeof link_path, "link.npy");
    write_bytes(out, "previous", 8);
    ck_assert(chmod(out, 0600) == 0);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/private.npy", "--block-size", "2", "--device", "host",
        NULL);
    ck_assert_int_eq(res.exit_code, 0);
    struct stat st;
    ck_assert(stat(out, &st) == 0);
    ck_assert_msg((st.st_mode & 07777) == 0600, "mode %o after the run, want 600", (unsigned)(st.st_mode & 07777));
    unlink(link_path);
    ck_assert(symlink("private.npy", link_path) == 0);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/link.npy", "--block-size", "2", "--device", "host",
        NULL);
    ck_assert_int_eq(res.exit_code, 0);
    ck_assert_msg(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced by a file");
    unlink(link_path);
    unlink(out);
    assert_no_temp_files();
}
END_TEST

/* ---- refused command lines: no OUT ---------------------------------------------------------- */

/* A command line clops refuses, and what its stderr must say. */
typedef struct refused_case {
    const char *args[12];
    const char *want; /* substring of stderr */
} refused_case;

/* Runs c: exit status `status`, c->want on stderr, no OUT written. */
static void run_refused(const refused_case *c, int i, int status)
{
    char out[512];
    tmp_path(out, sizeof out, "bad_out.npy");
    unlink(out);
    run_argv(c->args);
    ck_assert_msg(res.exit_code == status, "case %d (%s): exit %d, stderr: %s", i, c->want, res.exit_code, res.err);
    ck_assert_msg(strstr(res.err, c->want) != NULL, "case %d: stderr lacks '%s': %s", i, c->want, res.err);
    ck_assert(!file_exists(out));
}

/* ---- usage errors: exit 2 -------------------------------------------------------------------- */

#define D2S "run", "depth-to-space", "%D/dml_input_u32.npy", "%T/bad_out.npy"
#define UNPOOL "run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_i64.npy", "%T/bad_out.npy"

static const refused_case usage_cases[] = {
    {{NULL}, "usage: clops"},
    {{"frobnicate"}, "unknown command 'frobnicate'"},
    {{"--frobnicate"}, "unknown command"},
    {{"run"}, "usage: clops run"},
    {{"run", "transpose", "a.npy", "b.npy"}, "unknown operator 'transpose'"},
    {{D2S}, "missing required option --block-size"},
    {{"run", "depth-to-space", "%D/dml_input_u32.npy", "--block-size", "2"}, "missing arguments"},
    {{D2S, "%T/extra.npy", "--block-size", "2"}, "unexpected argument"},
    {{D2S, "--block-size"}, "option --block-size needs a value"},
    {{D2S, "--block-size", "2", "--block-size", "2"}, "given twice"},
    {{D2S, "--block-size", "2", "--order", "xyz"}, "--order must be dcr or crd"},
    {{D2S, "--block-size", "2", "--device", "gpu"}, "--device needs"},
    {{D2S, "--block-size", "2", "--device", "-1"}, "--device needs"},
    {{D2S, "--block-size", "2", "--type", "float16"}, "--type supports only bfloat16"},
    {{D2S, "--block-size", "2", "--bogus"}, "unknown option '--bogus'"},
    {{D2S, "--block-size", "2", "-\xffx"}, "unknown option '-\xff' for 'clops run depth-to-space'"}, /* glibc's optopt is -1 */
    {{D2S, "--block-size", "2", "-x"}, "unknown option '-x' for 'clops run depth-to-space'"},
    {{D2S, "--block-size", "2", "--verbose=1"}, "takes no value"},
    {{D2S, "--block-size", "2", "--output-shape", "1,2,4,4"}, "unknown option '--output-shape'"},
    {{UNPOOL}, "missing required option --output-shape"},
    {{UNPOOL, "--output-shape", "1,2,4,4", "--block-size", "2"}, "unknown option '--block-size'"},
    {{"devices", "extra"}, "unexpected argument 'extra'"},
    {{"devices", "--verbose"}, "unknown option"},
    {{"print"}, "missing arguments"},
    {{"print", "%D/dml_input_u32.npy", "--type", "int4"}, "--type supports only bfloat16"},
};
#define USAGE_CASES (int)(sizeof(usage_cases) / sizeof(usage_cases[0]))

/* Exit 2, the message on stderr, nothing on stdout, no OUT. */
static void run_usage_error(const refused_case *c, int i)
{
    run_refused(c, i, 2);
    ck_assert_msg(res.out[0] == '\0', "case %d: usage error wrote to stdout: %s", i, res.out);
}

START_TEST(test_usage_errors)
{
    run_usage_error(&usage_cases[_i], _i);
}
END_TEST

/* Values an option refuses, all with one message. */
typedef struct bad_values {
    const char *command[6]; /* the command line before the option */
    const char *option, *want;
    const char *values[12];
} bad_values;

static const bad_values bad_option_values[] = {
    {{D2S}, "--block-size", "--block-size needs an integer",
     {"0", "-2", "+2", " 2", "2x", "0x2", "", "2.0", "4294967296", "99999999999999999999999"}},
    {{UNPOOL}, "--output-shape", "--output-shape needs four integers",
     {"1,2,4", "1,2,4,4,4", "1,2,,4", "1,2,4,-4", "1,2,4,4,", "a,b,c,d", "1,2,4,4294967296"}},
};
#define BAD_OPTIONS (int)(sizeof(bad_option_values) / sizeof(bad_option_values[0]))

/* The i-th (option, value) of bad_option_values as a command line into c
 * (none for i < 0); returns how many there are. */
static int bad_value_case(int i, refused_case *c)
{
    int n = 0;
    for (int k = 0; k < BAD_OPTIONS; k++) {
        const bad_values *b = &bad_option_values[k];
        for (int v = 0; v < 12 && b->values[v] != NULL; v++, n++) {
            if (n != i) continue;
            int a = 0;
            for (; b->command[a] != NULL; a++)
                c->args[a] = b->command[a];
            c->args[a++] = b->option;
            c->args[a++] = b->values[v];
            c->args[a] = NULL;
            c->want = b->want;
        }
    }
    return n;
}

START_TEST(test_bad_option_values)
{
    refused_case c = {{NULL}, NULL};
    bad_value_case(_i, &c);
    ck_assert_ptr_nonnull(c.want);
    run_usage_error(&c, _i);
}
END_TEST

/* ---- file and operator errors: exit 1, one line, no output ----------------------------------- */

static const refused_case fail_cases[] = {
    {{"run", "depth-to-space", "%T/missing.npy", "%T/bad_out.npy", "--block-size", "2"}, "cannot open"},
    {{"run", "depth-to-space", "%T/not_npy.npy", "%T/bad_out.npy", "--block-size", "2"}, "NPY_ERR_BAD_MAGIC"},
    {{"run", "depth-to-space", "%T/truncated.npy", "%T/bad_out.npy", "--block-size", "2"},
     "NPY_ERR_TRUNCATED_DATA"},
    {{"run", "depth-to-space", "%T/big_endian.npy", "%T/bad_out.npy", "--block-size", "2"}, "NPY_ERR_BIG_ENDIAN"},
    {{"run", "depth-to-space", "%T/three_d.npy", "%T/bad_out.npy", "--block-size", "2"}, "4-D"},
    {{"run", "depth-to-space", "%T/.", "%T/bad_out.npy", "--block-size", "2"}, "NPY_ERR_NOT_REGULAR_FILE"},
    {{D2S, "--block-size", "3"}, "CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE"},
    {{D2S, "--block-size", "3", "--device", "host"}, "CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE"},
    {{"run", "space-to-depth", "%D/dml_input_u32.npy", "%T/bad_out.npy", "--block-size", "2"},
     "CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE"},
    {{D2S, "--block-size", "2", "--type", "bfloat16"}, "NPY_ERR_TYPE_OVERRIDE"},
    {{D2S, "--block-size", "2", "--device", "4294967295"}, "CLOPS_ERROR_INVALID_DEVICE_SELECTION"},
    {{"run", "depth-to-space", "%D/dml_input_u32.npy", "%T/no-such-dir/out.npy", "--block-size", "2"},
     "NPY_ERR_WRITE"},
    {{UNPOOL, "--output-shape", "1,3,4,4"}, "CLOPS_ERROR_BATCH_CHANNEL_MISMATCH"},
    {{UNPOOL, "--output-shape", "2,2,4,4", "--device", "host"}, "CLOPS_ERROR_BATCH_CHANNEL_MISMATCH"},
    {{"run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_input_f32.npy", "%T/bad_out.npy",
      "--output-shape", "1,2,4,4"},
     "CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE"},
    {{"run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/dml_input_u32.npy", "%T/bad_out.npy",
      "--output-shape", "1,2,4,4"},
     "CLOPS_ERROR_INDICES_SIZE_MISMATCH"},
    {{"run", "max-unpooling", "%D/unpool_input_f32.npy", "%T/missing.npy", "%T/bad_out.npy", "--output-shape",
      "1,2,4,4"},
     "missing.npy"},
    {{"print", "%T/not_npy.npy"}, "NPY_ERR_BAD_MAGIC"},
    {{"print", "%D/dml_input_u32.npy", "--type", "bfloat16"}, "NPY_ERR_TYPE_OVERRIDE"},
};
#define FAIL_CASES (int)(sizeof(fail_cases) / sizeof(fail_cases[0]))

START_TEST(test_failures)
{
    run_refused(&fail_cases[_i], _i, 1);
    assert_error_line(fail_cases[_i].want);
    assert_no_temp_files();
}
END_TEST

/* ---- suite -------------------------------------------------------------------------------------- */

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = cli_case(s);
    tcase_add_loop_test(tc, test_spec_examples, 0, RUN_CASES * DEVICE_VARIANTS);
    TC_TESTS(tc, test_fixtures_match_spec, test_fixtures_match_spec_text, test_device_index, test_onnx_unpool_readings);
    tcase_add_loop_test(tc, test_unpool_index_out_of_range, 0, 2);
    TC_TESTS(tc, test_output_not_regular, test_output_device, test_output_fifo_reader, test_output_keeps_mode);
    tcase_add_loop_test(tc, test_usage_errors, 0, USAGE_CASES);
    tcase_add_loop_test(tc, test_bad_option_values, 0, bad_value_case(-1, NULL));
    tcase_add_loop_test(tc, test_failures, 0, FAIL_CASES);
    return s;
}

int main(void)
{
    return cli_suite_main(cli_suite());
}
