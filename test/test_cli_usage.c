/*
 * test_cli_usage.c - what an integrator reads from the CLI (issue 25): messages
 * of any length printed whole, the out-of-range error naming the first bad index
 * and its position and saying nothing was written, the conformance report's
 * command re-running the same check when pasted into a shell, tune --json's
 * database file and cache status apart, one option syntax for every command, and
 * every option in the help (and the README's synopsis being that help). Shared
 * fixtures: cli_fixture.h.
 */
#define _XOPEN_SOURCE 700
#include "cli_fixture.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- messages of any length ------------------------------------------------------------------- */

/* A 1,500-byte output path in a missing directory: the whole path and the reason
 * (they were cut at 320 bytes); a 2,000-byte unknown option and --fallback value,
 * whole; an over-long one cut visibly. */
START_TEST(test_long_messages)
{
    char rel[1600] = "no-such-dir/";
    for (size_t i = strlen(rel); i < 1500; i++) rel[i] = i % 100 == 99 ? '/' : 'a';
    rel[1500] = '\0';
    strcat(rel, "/out.npy");
    char path[1800]; /* absolute: the fixture expands %T/ into 512 bytes only */
    tmp_path(path, sizeof path, rel);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", path, "--block-size", "2", "--device", "host", NULL);
    ck_assert_int_eq(res.exit_code, 1);
    assert_error_line("long output path");
    ck_assert_msg(strstr(res.err, path) != NULL && strstr(res.err, "No such file or directory (NPY_ERR_WRITE)"),
                  "the message is not whole: %.400s", res.err);

    char option[2100] = "--";
    memset(option + 2, 'x', 2000);
    option[2002] = '\0';
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/o.npy", "--block-size", "2", option, NULL);
    ck_assert_int_eq(res.exit_code, 2);
    ck_assert_msg(strstr(res.err, option) != NULL && strstr(res.err, "for 'clops run depth-to-space'"),
                  "the usage error is not whole: %.400s", res.err);

    /* A message an option's parser formats itself (snprintf, not set_err): whole
     * too (it was cut at 320 bytes); past ERR_SIZE set_err's ends in "..." */
    static char value[9000];
    memset(value, 'v', 2000);
    value[2000] = '\0';
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/o.npy", "--block-size", "2", "--fallback", value, NULL);
    ck_assert_int_eq(res.exit_code, 2);
    ck_assert_msg(strstr(res.err, value) != NULL && strstr(res.err, "'\nTry 'clops run depth-to-space --help'."),
                  "the --fallback error is not whole: %.400s", res.err);
    memset(value, 'v', sizeof value - 1);
    memcpy(value, "--", 2);
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/o.npy", "--block-size", "2", value, NULL);
    ck_assert_int_eq(res.exit_code, 2);
    ck_assert_msg(strstr(res.err, "vvv...\nTry 'clops run depth-to-space --help'."),
                  "a message cut at ERR_SIZE does not end in \"...\": %.100s", res.err + strlen(res.err) - 100);
}
END_TEST

/* ---- MaxUnpooling's out-of-range index ---------------------------------------------------------- */

/* On the host and on the device: the first bad index (32, past the output's 32
 * elements) and its input position, and that nothing was written - never that
 * elements were "skipped". */
START_TEST(test_out_of_range_message)
{
    const char *device = _i == 0 ? "host" : "0";
    if (_i == 1 && !have_device) return;
    run("run", "max-unpooling", "%D/unpool_input_f32.npy", "%D/unpool_indices_bad_i64.npy", "%T/unpool_bad.npy",
        "--output-shape", "1,2,4,4", "--device", device, NULL);
    ck_assert_int_eq(res.exit_code, 1);
    assert_error_line("out-of-range index");
    ck_assert_msg(strstr(res.err, "index 32 at input [0, 1, 1, 1] is outside the output's 32 elements") &&
                      strstr(res.err, "nothing was written") && !strstr(res.err, "skipped"),
                  "device %.400s: %.400s", device, res.err);
    char out[512];
    tmp_path(out, sizeof out, "unpool_bad.npy");
    ck_assert(!file_exists(out));
}
END_TEST

/* ---- the conformance report's command ----------------------------------------------------------- */

/* The "command" of a report, unescaped (the JSON escapes only '"' and '\'). */
static char *report_command(const char *path)
{
    size_t len;
    char *text = (char *)slurp(path, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    const char *at = strstr(text, "\"command\":");
    ck_assert_ptr_nonnull(at);
    at = strchr(at + 10, '"') + 1;
    char *cmd = malloc(len + 1), *o = cmd;
    for (; *at && *at != '"'; at++) *o++ = *at == '\\' ? *++at : *at;
    *o = '\0';
    free(text);
    return cmd;
}

/* The report names the command line as given, quoted for a shell; pasted into
 * /bin/sh (with the CLI first on PATH) it writes the same report again. */
START_TEST(test_conformance_command_reruns)
{
    char report[512], want[1200], dir[512];
    tmp_path(report, sizeof report, "conf report's.json");
    run("conformance", "--device", "host", "--quick", "--json", report, "--timeout=600", NULL);
    ck_assert_msg(res.exit_code == 0, "conformance: %d: %.400s", res.exit_code, res.err);
    char *cmd = report_command(report);
    snprintf(want, sizeof want, "clops conformance --device host --quick --json '%s/conf report'\\''s.json' "
                                "--timeout=600", tmp_dir);
    ck_assert_str_eq(cmd, want);
    ck_assert_int_eq(unlink(report), 0);

    snprintf(dir, sizeof dir, "%s", cli_path);
    *strrchr(dir, '/') = '\0';
    char *script = malloc(strlen(cmd) + 1200);
    sprintf(script, "PATH='%s':\"$PATH\" && %s >/dev/null 2>&1", dir, cmd);
    const int status = system(script);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the pasted command failed: %.400s", script);
    char *again = report_command(report);
    ck_assert_str_eq(again, cmd);
    free(again);
    free(script);
    free(cmd);
    unlink(report);
}
END_TEST

/* ---- tune --json --------------------------------------------------------------------------------- */

/* "database" is the tuning database's file, "cache" the program cache's status
 * (it was the status string under "database"): here a read-only cache, so the
 * tuner refuses to start, and says so in the same document. */
START_TEST(test_tune_json_database)
{
    if (!have_device) return;
    char dir[512];
    tmp_path(dir, sizeof dir, "tune-cache");
    mkdir(dir, 0700);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    setenv("CLOPS_CACHE", "ro", 1);
    run("tune", "--json", "--device", "0", NULL);
    unsetenv("CLOPS_CACHE");
    unsetenv("CLOPS_CACHE_DIR");
    ck_assert_int_eq(res.exit_code, 1);
    char want[700];
    snprintf(want, sizeof want, "\"database\":\t\"%s/tune-", dir);
    const char *db = strstr(res.out, want);
    ck_assert_msg(db != NULL, "tune --json: %.400s", res.out);
    const char *end = strchr(db + strlen(want), '"');
    ck_assert_msg(end && end - 4 > db && strncmp(end - 4, ".txt", 4) == 0, "database is not the file: %.400s", res.out);
    snprintf(want, sizeof want, "\"cache\":\t\"%s (read-only)\"", dir);
    ck_assert_msg(strstr(res.out, want) && strstr(res.out, "CLOPS_ERROR_CACHE_UNAVAILABLE"), "tune --json: %.400s",
                  res.out);
    rmdir(dir);
}
END_TEST

/* ---- one option syntax --------------------------------------------------------------------------- */

typedef struct form_case {
    const char *args[12];
    int status;
    const char *want; /* on stderr (or stdout for status 0), or NULL */
} form_case;

static const form_case form_cases[] = {
    /* --opt=VALUE wherever --opt VALUE works, prefixes of names, options among operands */
    {{"conformance", "--device=host", "--quick", "--json=/dev/null"}, 0, "passed"},
    {{"conformance", "--dev", "host", "--qu", "--json", "%T/r.json"}, 0, "passed"},
    {{"run", "depth-to-space", "--block=2", "%D/dml_input_u32.npy", "--dev=host", "%T/f.npy"}, 0, NULL},
    {{"run", "depth-to-space", "%D/dml_input_u32.npy", "%T/f.npy", "--block-size=2", "--order=crd", "--device",
      "host"}, 0, NULL},
    {{"cache", "list", "--js"}, 0, "\"entries\""},
    /* refused alike everywhere */
    {{"run", "depth-to-space", "--t", "2"}, 2, "ambiguous option '--t'"},
    {{"conformance", "--json"}, 2, "option --json needs a value"},
    {{"conformance", "--quick=yes"}, 2, "option --quick takes no value"},
    {{"conformance", "--device", "gpu"}, 2, "--device needs N"},
    {{"conformance", "--device", "4294967296"}, 2, "--device needs N"},
    {{"kernels", "pack-add", "%T/p.pack", "--device", "host", "--list", "%T/l.txt"}, 2,
     "--device needs a device index from 'clops devices', not 'host'"},
    {{"kernels", "list", "--device", "-1"}, 2, "--device needs a device index from 'clops devices', not '-1'"},
    {{"conformance", "--quick", "--quick"}, 2, "given twice"},
    {{"conformance", "extra"}, 2, "unexpected argument 'extra'"},
    {{"kernels", "list", "--types", "FLOAT32,NOPE"}, 2, "--types: a word of 'FLOAT32,NOPE'"},
    {{"kernels", "list", "--windows=0x2"}, 2, "--windows"},
    {{"kernels", "pack-add", "%T/p.pack", "--device", "0", "--source", "depth_space.cl"}, 2,
     "missing required option --options"},
    {{"kernels", "pack-add", "%T/p.pack", "--device", "0", "--list", "%T/l.txt", "--binary", "%T/b"}, 2,
     "--list FILE takes the place of --source, --options and --binary"},
    {{"kernels", "source"}, 2, "missing arguments"},
    {{"kernels", "frob"}, 2, "unknown kernels subcommand 'frob'"},
};
#define FORM_CASES (int)(sizeof form_cases / sizeof form_cases[0])

START_TEST(test_option_forms)
{
    const form_case *c = &form_cases[_i];
    run_argv(c->args);
    ck_assert_msg(res.exit_code == c->status, "case %d: exit %d: %.400s", _i, res.exit_code, res.err);
    if (c->want)
        ck_assert_msg(strstr(c->status ? res.err : res.out, c->want) != NULL, "case %d: %.400s%.400s", _i, res.out, res.err);
    char out[512];
    tmp_path(out, sizeof out, "f.npy");
    unlink(out);
    tmp_path(out, sizeof out, "r.json");
    unlink(out);
}
END_TEST

/* ---- help ------------------------------------------------------------------------------------------ */

typedef struct help_options {
    const char *command[3];
    const char *options[10];
} help_options;

/* Every option each command accepts. */
static const help_options help_cases[] = {
    {{"run", "depth-to-space"},
     {"--block-size B", "--order dcr|crd", "--device N|host", "--type bfloat16", "--verbose", "--fallback allow|never",
      "--timeout SECONDS"}},
    {{"run", "max-unpooling"}, {"--output-shape N,C,H,W", "--device", "--type", "--verbose", "--fallback", "--timeout"}},
    {{"conformance"}, {"--device N|host|all", "--quick", "--json FILE", "--fallback allow|never", "--timeout SECONDS"}},
    {{"kernels", "list"},
     {"--device N", "--ops LIST", "--types LIST", "--blocks LIST", "--layouts LIST", "--windows LIST", "--portable",
      "--json"}},
    {{"kernels", "pack-add"}, {"--device N", "--source FILE", "--options OPTIONS", "--binary BIN", "--list FILE"}},
    {{"tune"}, {"--device N", "--quick", "--json"}},
    {{"cache", "list"}, {"--json"}},
    {{"devices"}, {"--json"}},
};
#define HELP_CASES (int)(sizeof help_cases / sizeof help_cases[0])

/* Each command's --help names every option it takes, and so does 'clops --help'
 * in the command's usage line. */
START_TEST(test_help_names_every_option)
{
    const help_options *h = &help_cases[_i];
    const char *args[6] = {NULL};
    int n = 0;
    for (; h->command[n]; n++) args[n] = h->command[n];
    args[n] = "--help";
    run_argv(args);
    ck_assert_int_eq(res.exit_code, 0);
    for (int o = 0; h->options[o]; o++)
        ck_assert_msg(strstr(res.out, h->options[o]) != NULL, "'%.400s %.400s --help' lacks %.400s: %.400s", h->command[0],
                      h->command[1] ? h->command[1] : "", h->options[o], res.out);
    run("--help", NULL);
    ck_assert_int_eq(res.exit_code, 0);
    for (int o = 0; h->options[o]; o++) {
        char word[64];
        snprintf(word, sizeof word, "%s", h->options[o]);
        ck_assert_msg(strstr(res.out, word) != NULL, "'clops --help' lacks %.400s", word);
    }
}
END_TEST

/* The README's synopsis of the CLI is 'clops --help''s list of commands. */
START_TEST(test_readme_synopsis_is_help)
{
    const char *src = getenv("CLOPS_SOURCE_DIR");
    ck_assert_ptr_nonnull(src);
    char path[600];
    snprintf(path, sizeof path, "%s/README.md", src);
    size_t len;
    char *readme = (char *)slurp(path, &len);
    readme = realloc(readme, len + 1);
    readme[len] = '\0';
    run("--help", NULL);
    char *list = strstr(res.out, "commands:\n");
    ck_assert_ptr_nonnull(list);
    for (char *line = strtok(list + 10, "\n"); line && line[0] == ' '; line = strtok(NULL, "\n")) {
        char want[200];
        snprintf(want, sizeof want, "\n    %s", line + 2);
        if (strstr(line, "clops bench")) continue; /* the README adds a comment to these */
        ck_assert_msg(strstr(readme, want) != NULL, "README.md's CLI synopsis lacks '%.400s'", line + 2);
    }
    free(readme);
}
END_TEST

/* ---- bench-startup's device ----------------------------------------------------------------------- */

/* bench-startup takes the default device as every command does (it took device 0
 * whatever CLOPS_DEVICE said): with CLOPS_DEVICE naming the host backend, or a
 * device that does not exist, it says so at once instead of benchmarking device 0. */
START_TEST(test_bench_startup_default_device)
{
    static const char *const devices[] = {"host", "99"};
    static const char *const want[] = {"the default device is the host backend", "99"};
    setenv("CLOPS_DEVICE", devices[_i], 1);
    const char *args[] = {"bench-startup", "--quick", NULL};
    run_argv_bounded(120, args);
    unsetenv("CLOPS_DEVICE");
    ck_assert_msg(res.exit_code == 1, "CLOPS_DEVICE=%s: exit %d (-1: still benchmarking after 120 s): %.400s",
                  devices[_i], res.exit_code, res.err);
    ck_assert_msg(strstr(res.err, want[_i]) != NULL, "CLOPS_DEVICE=%s: %.400s", devices[_i], res.err);
}
END_TEST

static Suite *cli_usage_suite(void)
{
    Suite *s = suite_create("cli_usage");
    TCase *tc = cli_case(s);
    tcase_add_test(tc, test_long_messages);
    tcase_add_loop_test(tc, test_out_of_range_message, 0, 2);
    TC_TESTS(tc, test_conformance_command_reruns, test_tune_json_database);
    tcase_add_loop_test(tc, test_option_forms, 0, FORM_CASES);
    tcase_add_loop_test(tc, test_help_names_every_option, 0, HELP_CASES);
    tcase_add_test(tc, test_readme_synopsis_is_help);
    tcase_add_loop_test(tc, test_bench_startup_default_device, 0, 2);
    return s;
}

int main(void)
{
    return cli_suite_main(cli_usage_suite());
}
