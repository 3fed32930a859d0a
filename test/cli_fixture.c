/* cli_fixture.c - what the CLI suites share (cli_fixture.h). */
#define _XOPEN_SOURCE 700 /* nftw, for tc_rm_rf */
#include "cli_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_fs.h"

extern char **environ;

const char *cli_path;
const char *data_dir;
char tmp_dir[256];
int have_device; /* `clops devices` lists at least one device */

/* ---- running the CLI ------------------------------------------------------------------ */


cli_result res;

/* "%D/x" -> data_dir/x, "%T/x" -> tmp_dir/x, anything else as is. */
static const char *expand(const char *arg, char *buf, size_t size)
{
    if (strncmp(arg, "%D/", 3) == 0)
        snprintf(buf, size, "%s/%s", data_dir, arg + 3);
    else if (strncmp(arg, "%T/", 3) == 0)
        snprintf(buf, size, "%s/%s", tmp_dir, arg + 3);
    else
        return arg;
    return buf;
}

static void read_capture(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs the CLI with the NULL-terminated argument list in args into res. */
void run_argv(const char *const *args)
{
    static char expanded[MAX_ARGS][512];
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)cli_path;
    for (int i = 0; args[i] != NULL; i++) {
        ck_assert_int_lt(argc, MAX_ARGS + 1);
        argv[argc++] = (char *)expand(args[i], expanded[i], sizeof expanded[i]);
    }
    argv[argc] = NULL;

    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/.stdout", tmp_dir);
    snprintf(err_path, sizeof err_path, "%s/.stderr", tmp_dir);
    posix_spawn_file_actions_t fa;
    ck_assert_int_eq(posix_spawn_file_actions_init(&fa), 0);
    ck_assert_int_eq(posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
    ck_assert_int_eq(posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
    pid_t pid;
    int rc = posix_spawn(&pid, cli_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "posix_spawn %s: %s", cli_path, strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    read_capture(out_path, res.out, sizeof res.out);
    read_capture(err_path, res.err, sizeof res.err);
    unlink(out_path);
    unlink(err_path);
}

/* run_argv, but the CLI is killed (SIGALRM, exit_code -1) if it has not ended
 * within `seconds`: for the cases where the bug is a hang. */
void run_argv_bounded(unsigned seconds, const char *const *args)
{
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/.stdout", tmp_dir);
    snprintf(err_path, sizeof err_path, "%s/.stderr", tmp_dir);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *argv[MAX_ARGS + 2];
        int argc = 0;
        argv[argc++] = cli_path;
        for (int i = 0; args[i] && argc < MAX_ARGS + 1; i++) argv[argc++] = args[i];
        argv[argc] = NULL;
        const int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
        alarm(seconds); /* kept across exec: ends a hung CLI */
        execv(cli_path, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) ck_assert_int_eq(errno, EINTR);
    res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    size_t n;
    unsigned char *b = slurp(out_path, &n);
    n = n < sizeof res.out - 1 ? n : sizeof res.out - 1;
    memcpy(res.out, b, n), res.out[n] = '\0';
    free(b);
    b = slurp(err_path, &n);
    n = n < sizeof res.err - 1 ? n : sizeof res.err - 1;
    memcpy(res.err, b, n), res.err[n] = '\0';
    free(b);
    unlink(out_path);
    unlink(err_path);
}

/* run("run", "depth-to-space", ..., NULL) */
void run(const char *first, ...)
{
    const char *args[MAX_ARGS + 1];
    int n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a != NULL; a = va_arg(ap, const char *)) {
        ck_assert_int_lt(n, MAX_ARGS);
        args[n++] = a;
    }
    va_end(ap);
    args[n] = NULL;
    run_argv(args);
}

/* ---- file helpers --------------------------------------------------------------------------- */

void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmp_dir, name);
}

int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

void write_bytes(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* No temporary file of the atomic writer is left in the temporary directory. */
void assert_no_temp_files(void)
{
    DIR *d = opendir(tmp_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        ck_assert_msg(strstr(e->d_name, ".tmp") == NULL, "temporary file left behind: %s", e->d_name);
    closedir(d);
}

void make_array(const char *name, clops_data_type type, unsigned ndim, const uint64_t *shape,
                       const void *data, size_t nbytes)
{
    char path[512], msg[NPY_MESSAGE_SIZE];
    tmp_path(path, sizeof path, name);
    ck_assert_msg(npy_write_atomic(path, type, ndim, shape, data, nbytes, msg, sizeof msg) == NPY_OK, "%s", msg);
}

/* Compares two .npy files: same bytes, and (to report values) same elements. */
void assert_same_npy(const char *got_path, const char *want_path, const char *label)
{
    char msg[NPY_MESSAGE_SIZE];
    npy_array got, want;
    ck_assert_msg(npy_read(got_path, CLOPS_DATA_TYPE_UNKNOWN, &got, msg, sizeof msg) == NPY_OK, "%s: output: %s",
                  label, msg);
    ck_assert_msg(npy_read(want_path, CLOPS_DATA_TYPE_UNKNOWN, &want, msg, sizeof msg) == NPY_OK,
                  "%s: expected: %s", label, msg);
    ck_assert_str_eq(got.descr, want.descr);
    ck_assert_uint_eq(got.ndim, want.ndim);
    for (unsigned d = 0; d < got.ndim; d++)
        ck_assert_uint_eq(got.shape[d], want.shape[d]);
    ck_assert_uint_eq(got.nbytes, want.nbytes);
    for (uint64_t i = 0; i < got.count; i++) {
        const unsigned char *g = (const unsigned char *)got.data + i * got.itemsize;
        const unsigned char *w = (const unsigned char *)want.data + i * want.itemsize;
        if (memcmp(g, w, got.itemsize) == 0)
            continue;
        if (got.data_type == CLOPS_DATA_TYPE_FLOAT32) {
            float gv, wv;
            memcpy(&gv, g, 4);
            memcpy(&wv, w, 4);
            ck_abort_msg("%s: element %llu is %g, want %g", label, (unsigned long long)i, gv, wv);
        } else {
            uint32_t gv = 0, wv = 0;
            memcpy(&gv, g, got.itemsize < 4 ? got.itemsize : 4);
            memcpy(&wv, w, want.itemsize < 4 ? want.itemsize : 4);
            ck_abort_msg("%s: element %llu is %u, want %u", label, (unsigned long long)i, gv, wv);
        }
    }
    npy_free(&got);
    npy_free(&want);
    size_t lg, lw;
    unsigned char *bg = slurp(got_path, &lg), *bw = slurp(want_path, &lw);
    ck_assert_msg(lg == lw && memcmp(bg, bw, lg) == 0, "%s: %s and %s differ (header bytes)", label, got_path,
                  want_path);
    free(bg);
    free(bw);
}

/* Exactly one line on stderr, starting "clops: error: ". */
void assert_error_line(const char *label)
{
    ck_assert_msg(strncmp(res.err, "clops: error: ", 14) == 0, "%s: stderr is '%s'", label, res.err);
    char *nl = strchr(res.err, '\n');
    ck_assert_msg(nl != NULL && nl[1] == '\0', "%s: stderr is not one line: '%s'", label, res.err);
}

static void make_broken_inputs(void)
{
    char path[512];
    tmp_path(path, sizeof path, "not_npy.npy");
    write_bytes(path, "this is not a numpy file\n", 25);

    char fixture[512];
    snprintf(fixture, sizeof fixture, "%s/dml_input_u32.npy", data_dir);
    size_t len;
    unsigned char *bytes = slurp(fixture, &len);
    tmp_path(path, sizeof path, "truncated.npy");
    write_bytes(path, bytes, len - 10);
    /* the same file with a big-endian dtype */
    unsigned char *lt = (unsigned char *)strstr((char *)bytes + 10, "'<u4'");
    ck_assert_ptr_nonnull(lt);
    lt[1] = '>';
    tmp_path(path, sizeof path, "big_endian.npy");
    write_bytes(path, bytes, len);
    free(bytes);

    uint64_t shape[3] = {8, 2, 3};
    uint32_t data[48] = {0};
    make_array("three_d.npy", CLOPS_DATA_TYPE_UINT32, 3, shape, data, sizeof data);
}

static void remove_tmp_dir(void)
{
    tc_rm_rf(tmp_dir);
}

void setup_once(void)
{
    make_broken_inputs();
    run("devices", NULL);
    ck_assert_msg(res.exit_code == 0, "'clops devices' failed: %s", res.err);
    have_device = strstr(res.out, "  device 0: ") != NULL;
}

TCase *cli_case(Suite *s)
{
    TCase *tc = tc_suite_case(s, "setup", 600);
    tcase_add_unchecked_fixture(tc, setup_once, NULL);
    return tc;
}

int cli_suite_main(Suite *s)
{
    cli_path = getenv("CLOPS_CLI");
    data_dir = getenv("CLOPS_TEST_DATA");
    if (cli_path == NULL || data_dir == NULL) {
        fprintf(stderr, "test_cli: CLOPS_CLI and CLOPS_TEST_DATA must be set (ctest sets them)\n");
        return EXIT_FAILURE;
    }
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/clops_test_cli.XXXXXX", base != NULL && base[0] ? base : "/tmp");
    if (mkdtemp(tmp_dir) == NULL) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    const int failed = tc_run_failures(s, 0);
    remove_tmp_dir();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
