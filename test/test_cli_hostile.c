/*
 * test_cli_hostile.c - the CLI against hostile files and settings (issue 24):
 * `cache list` on entries whose keys are shorter than what it looks for (N10),
 * `conformance --json` through the library's file writer (N11), `kernels
 * pack-add --binary` through the store's bounded reader (N16) and its --list's
 * malformed lines refused by their numbers, JSON outputs that
 * stay valid UTF-8 whatever bytes a path holds (N17), and the watchdog taking
 * CLOPS_TIMEOUT as the default of --timeout; strict --windows sides and device
 * indices past INT32_MAX (issue 38 Q6, Q7); a pack-add --list that names no
 * binary and conformance on an index past the devices, and pack-add of build
 * options that name no program (findings of 2026-12-07, R4, R6 and R7). Shared
 * fixtures: cli_fixture.h.
 */
#define _XOPEN_SOURCE 700
#include "cli_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)data)[i]) * 0x100000001b3ull;
    return h;
}

/* A cache entry file (lib/store/cache_entry.c's format) with a correct checksum. */
static void write_entry(const char *path, const char *key, size_t klen, const void *payload, size_t plen)
{
    unsigned char *file = calloc(1, 32 + klen + plen);
    ck_assert_ptr_nonnull(file);
    memcpy(file, "CLOPSBIN", 8);
    put_le(file + 8, 1, 4);
    put_le(file + 12, klen, 4);
    put_le(file + 16, plen, 8);
    memcpy(file + 32, key, klen);
    memcpy(file + 32 + klen, payload, plen);
    put_le(file + 24, fnv1a(fnv1a(0xcbf29ce484222325ull, key, klen), payload, plen), 8);
    write_bytes(path, file, 32 + klen + plen);
    free(file);
}

/* Whether s is valid UTF-8 (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF). */
static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s, len, cp, min;
        if (c < 0x80) {
            s++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
        else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
        else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
        else return 0;
        cp = c & (0x7fu >> len);
        for (unsigned i = 1; i < len; i++) {
            if ((s[i] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        s += len;
    }
    return 1;
}

/* ---- N10: cache list on short keys --------------------------------------------------------------- */

/* Entries whose keys are shorter than "source:" (or empty), with a valid
 * checksum: both forms of `cache list` stay inside the key (before the fix the
 * sanitizer build reported a heap over-read in each) and show what there is. */
START_TEST(test_cache_list_short_keys)
{
    char dir[512], e1[600], e2[600], e3[600];
    tmp_path(dir, sizeof dir, "cache-short-keys");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(e1, sizeof e1, "%s/00000000000000a1.bin", dir);
    snprintf(e2, sizeof e2, "%s/00000000000000a2.bin", dir);
    snprintf(e3, sizeof e3, "%s/00000000000000a3.bin", dir);
    write_entry(e1, "", 0, "", 0);
    write_entry(e2, "sou", 3, "", 0);
    write_entry(e3, "device: D\nsou", 13, "", 0);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    run("cache", "list", NULL);
    ck_assert_msg(res.exit_code == 0, "cache list: exit %d: %.400s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.out, "3 entries") != NULL, "cache list: %.400s", res.out);
    ck_assert_msg(strstr(res.out, "00000000000000a3.bin") && strstr(res.out, "  D  "), "cache list: %.400s", res.out);
    run("cache", "list", "--json", NULL);
    ck_assert_msg(res.exit_code == 0, "cache list --json: exit %d: %.400s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.out, "\"key\":\t\"sou\"") && strstr(res.out, "\"key\":\t\"device: D\\nsou\"") &&
                      strstr(res.out, "\"key\":\t\"\""),
                  "cache list --json: %.400s", res.out);
    unsetenv("CLOPS_CACHE_DIR");
    unlink(e1), unlink(e2), unlink(e3);
    rmdir(dir);
}
END_TEST

/* ---- N11: conformance --json through the file writer ---------------------------------------------- */

/* A FIFO that no process reads is refused at once, before the run (it hung at
 * the end of the run); /dev/full says why; a report that cannot be written
 * leaves no temporary file; a written one is whole JSON and valid UTF-8. */
START_TEST(test_conformance_json_targets)
{
    char fifo[512], report[512];
    tmp_path(fifo, sizeof fifo, "report.fifo");
    tmp_path(report, sizeof report, "report.json");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *to_fifo[] = {"conformance", "--device", "host", "--quick", "--json", fifo, NULL};
    run_argv_bounded(60, to_fifo);
    ck_assert_msg(res.exit_code == 1, "conformance --json FIFO: exit %d (-1: hung): %.400s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.err, "no process is reading") != NULL, "conformance --json FIFO: %.400s", res.err);
    ck_assert_msg(strstr(res.out, "passed") == NULL, "the run went ahead: %.400s", res.out);
    unlink(fifo);

    run("conformance", "--device", "host", "--quick", "--json", "/dev/full", NULL);
    ck_assert_int_eq(res.exit_code, 1);
    ck_assert_msg(strstr(res.err, "No space left on device") != NULL, "conformance --json /dev/full: %.400s", res.err);

    run("conformance", "--device", "host", "--quick", "--json", "%T/no-such-dir/report.json", NULL);
    ck_assert_int_eq(res.exit_code, 1);
    ck_assert_msg(strstr(res.err, "report.json") && strstr(res.out, "passed") == NULL, "missing dir: %.400s", res.err);

    write_bytes(report, "old report\n", 11);
    run("conformance", "--device", "host", "--quick", "--json", report, NULL);
    ck_assert_msg(res.exit_code == 0, "conformance: exit %d: %.400s", res.exit_code, res.err);
    size_t len;
    unsigned char *text = slurp(report, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    ck_assert_msg(len > 2 && text[0] == '{' && text[len - 2] == '}' && text[len - 1] == '\n', "report: %.400s", text);
    ck_assert_msg(valid_utf8(text), "the report is not valid UTF-8");
    free(text);
    assert_no_temp_files();
    unlink(report);
}
END_TEST

/* ---- N16: pack-add --binary through the bounded reader ------------------------------------------- */

/* The build options of device 0's k-th distinct program of `kernels list --ops
 * d2s --types UINT8` (lines "SOURCE  HASH  OPTIONS"), into `buf`: what pack-add
 * accepts (R7). */
static void listed_options(int k, char *buf, size_t size)
{
    static char options[8][400];
    static int count;
    if (!count) {
        run("kernels", "list", "--device", "0", "--ops", "d2s", "--types", "UINT8", NULL);
        ck_assert_msg(res.exit_code == 0, "kernels list: exit %d: %.400s", res.exit_code, res.err);
        for (char *line = strtok(res.out, "\n"); line && count < 8; line = strtok(NULL, "\n")) {
            char src[64], hash[32];
            int at = 0;
            if (line[0] == '#' || sscanf(line, "%63s %31s %n", src, hash, &at) != 2 || !at) continue;
            ck_assert_str_eq(src, "depth_space.cl");
            int seen = 0;
            for (int i = 0; i < count; i++) seen |= strcmp(options[i], line + at) == 0;
            if (!seen) snprintf(options[count++], sizeof options[0], "%s", line + at);
        }
    }
    ck_assert_msg(k < count, "kernels list named %d programs, not %d", count, k + 1);
    snprintf(buf, size, "%s", options[k]);
}

/* A FIFO (which blocked), an endless device (read until memory ran out), a
 * directory and a file larger than a pack entry may hold are refused before a
 * byte is read; nothing is created. */
START_TEST(test_pack_add_binary_not_regular)
{
    char fifo[512], pack[512];
    tmp_path(fifo, sizeof fifo, "binary.fifo");
    tmp_path(pack, sizeof pack, "aot.pack");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *bins[] = {fifo, "/dev/zero", tmp_dir};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"kernels", "pack-add", pack,      "--device", "0",      "--source", "depth_space.cl",
                              "--options", "-DX=1",   "--binary", bins[i],    NULL};
        run_argv_bounded(60, args);
        ck_assert_msg(res.exit_code == 1, "pack-add --binary %.400s: exit %d (-1: hung or killed): %.400s", bins[i],
                      res.exit_code, res.err);
        ck_assert_msg(strstr(res.err, "not a regular file") != NULL, "pack-add --binary %.400s: %.400s", bins[i], res.err);
        ck_assert_msg(!file_exists(pack), "pack-add --binary %.400s created the pack", bins[i]);
    }
    unlink(fifo);

    /* A (sparse) file past what a pack entry may hold: refused by its size, unread. */
    char huge[512];
    tmp_path(huge, sizeof huge, "huge.bin");
    const int fd = open(huge, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)(1024ll << 20) + 1), 0);
    close(fd);
    const char *args[] = {"kernels", "pack-add", pack,    "--device", "0",  "--source", "depth_space.cl",
                          "--options", "-DX=1", "--binary", huge,     NULL};
    run_argv_bounded(60, args);
    ck_assert_msg(res.exit_code == 1 && strstr(res.err, "larger than the 1073741824 bytes a pack entry may hold"),
                  "pack-add --binary of 1 GiB + 1: exit %d: %.400s", res.exit_code, res.err);
    ck_assert(!file_exists(pack));
    unlink(huge);
}
END_TEST

/* pack-add --list: a malformed line (one tab), or one whose binary cannot be
 * read, is refused with its line number and the pack is left as it was; the
 * list then adds its binaries, comments and blank lines skipped, the last line
 * for a program winning. */
START_TEST(test_pack_add_list_malformed_line)
{
    char pack[512], bin[512], list[512], line[4000], X[400], Y[400], Z[400];
    listed_options(0, X, sizeof X); /* programs of device 0: pack-add refuses options that are none (R7) */
    listed_options(1, Y, sizeof Y);
    listed_options(2, Z, sizeof Z);
    tmp_path(pack, sizeof pack, "aot.pack");
    tmp_path(bin, sizeof bin, "kernel.bin");
    tmp_path(list, sizeof list, "binaries.txt");
    write_bytes(bin, "not a real binary", 17);
    snprintf(line, sizeof line, "depth_space.cl\t%s\t%s\n", X, bin);
    write_bytes(list, line, strlen(line));
    const char *args[] = {"kernels", "pack-add", pack, "--device", "0", "--list", list, NULL};
    run_argv(args);
    ck_assert_msg(res.exit_code == 0 && strstr(res.out, ": 1 entry"), "exit %d: %.400s%.400s", res.exit_code, res.out,
                  res.err);
    size_t len, now_len;
    unsigned char *was = slurp(pack, &len);
    const char *bad[] = {"depth_space.cl\t%s %s\n", "depth_space.cl\t%s\t%s.missing\n"};
    const char *want[] = {"binaries.txt:3: not SOURCE<TAB>OPTIONS<TAB>BINARY-PATH", "binaries.txt:3: "};
    for (int i = 0; i < 2; i++) {
        int n = snprintf(line, sizeof line, "# SOURCE<TAB>OPTIONS<TAB>BINARY\ndepth_space.cl\t%s\t%s\n", Z, bin);
        n += snprintf(line + n, sizeof line - (size_t)n, bad[i], Y, bin);
        write_bytes(list, line, (size_t)n);
        run_argv(args);
        ck_assert_msg(res.exit_code == 1 && strstr(res.err, want[i]), "case %d: exit %d: %.400s", i, res.exit_code,
                      res.err);
        unsigned char *now = slurp(pack, &now_len);
        ck_assert_msg(now_len == len && memcmp(now, was, len) == 0, "case %d changed the pack", i);
        free(now);
        assert_no_temp_files();
    }
    free(was);
    int n = snprintf(line, sizeof line, "\n# two programs\ndepth_space.cl\t%s\t%s\n", Z, bin);
    snprintf(line + n, sizeof line - (size_t)n, "depth_space.cl\t%s\t%s\n", X, bin);
    write_bytes(list, line, strlen(line));
    run_argv(args);
    ck_assert_msg(res.exit_code == 0 && strstr(res.out, ": 2 entries"), "exit %d: %.400s%.400s", res.exit_code, res.out,
                  res.err);
    unlink(pack);
    unlink(bin);
    unlink(list);
}
END_TEST

/* ---- N17: JSON outputs are valid UTF-8 ------------------------------------------------------------ */

/* A cache directory whose name is not UTF-8 (bytes ff fe): `cache list --json`
 * is valid UTF-8, each such byte as U+00FF, U+00FE; valid UTF-8 (U+00E9) stays. */
START_TEST(test_json_non_utf8_path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/\xff\xfe-caf\xc3\xa9", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    setenv("CLOPS_CACHE_DIR", dir, 1);
    run("cache", "list", "--json", NULL);
    unsetenv("CLOPS_CACHE_DIR");
    ck_assert_msg(res.exit_code == 0, "cache list --json: exit %d: %.400s", res.exit_code, res.err);
    ck_assert_msg(valid_utf8((const unsigned char *)res.out), "cache list --json is not valid UTF-8: %.400s", res.out);
    ck_assert_msg(strstr(res.out, "/\xc3\xbf\xc3\xbe-caf\xc3\xa9") != NULL, "cache list --json: %.400s", res.out);
    rmdir(dir);
}
END_TEST

/* ---- the watchdog's default: CLOPS_TIMEOUT ------------------------------------------------------ */

/* `--timeout` defaults to CLOPS_TIMEOUT, as the help says: a run on the host
 * backend (where the library has no wait to bound) that takes longer than the
 * variable is ended by the watchdog, exit 1 naming the variable, no output (the
 * message names the device, or says none was ready yet on a busy machine). The
 * same run under --timeout is the control: it must time out too. */
START_TEST(test_timeout_from_environment)
{
    const uint64_t shape[4] = {1, 16, 1024, 1024}; /* 64 MiB: far more than a millisecond's work */
    const size_t bytes = 16u << 22;
    void *zeros = calloc(1, bytes);
    ck_assert_ptr_nonnull(zeros);
    make_array("timeout_in.npy", CLOPS_DATA_TYPE_FLOAT32, 4, shape, zeros, bytes);
    free(zeros);
    run("run", "depth-to-space", "%T/timeout_in.npy", "%T/timeout_out.npy", "--block-size", "2", "--device", "host",
        "--timeout", "0.001", NULL);
    ck_assert_msg(res.exit_code == 1 && strstr(res.err, "within 0.001 s (--timeout)"),
                  "control run with --timeout: exit %d: %.400s", res.exit_code, res.err);
    setenv("CLOPS_TIMEOUT", "0.001", 1);
    run("run", "depth-to-space", "%T/timeout_in.npy", "%T/timeout_out.npy", "--block-size", "2", "--device", "host",
        NULL);
    unsetenv("CLOPS_TIMEOUT");
    ck_assert_msg(res.exit_code == 1, "CLOPS_TIMEOUT=0.001: exit %d: %.400s", res.exit_code, res.err);
    ck_assert_msg(strstr(res.err, "within 0.001 s (CLOPS_TIMEOUT)") != NULL, "stderr: %.400s", res.err);
    char out[512];
    tmp_path(out, sizeof out, "timeout_out.npy");
    ck_assert_msg(!file_exists(out), "a timed-out run wrote its output");
    tmp_path(out, sizeof out, "timeout_in.npy");
    unlink(out);
    assert_no_temp_files();
}
END_TEST

/* Issue 38 Q7: every --windows side is a strict decimal from 1 to 64. Each of
 * these was accepted (wrapping modulo 2^32: 4294967297x1 listed as 1x1; a leading
 * space skipped); now each is the usage error naming --windows. 2x2 is the control. */
START_TEST(test_windows_strict_sides)
{
    static const char *const bad[] = {"4294967297x1", "4294967301x4294967298", " 2x2", "2x 2", "+2x2", "2x+2",
                                      "2x2 ",          "65x1",                  "1x65", "0x2", "2x",  "x2",
                                      "2",             "2x2x2",                 "-1x2", "18446744073709551618x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run("kernels", "list", "--ops", "unpool", "--types", "uint8", "--layouts", "packed", "--windows", bad[i],
            NULL);
        ck_assert_msg(res.exit_code == 2 && strstr(res.err, "--windows") && strstr(res.err, bad[i]),
                      "--windows '%s': exit %d: %.400s", bad[i], res.exit_code, res.err);
    }
    if (!have_device) return; /* the list needs a device */
    run("kernels", "list", "--ops", "unpool", "--types", "uint8", "--layouts", "packed", "--windows", "2x2,64x1",
        NULL);
    ck_assert_msg(res.exit_code == 0, "--windows 2x2,64x1: exit %d: %.400s", res.exit_code, res.err);
}
END_TEST

/* Issue 38 Q6: a device index past INT32_MAX was refused as "device N requested,
 * N devices available" (the index given as the count). Now the count is the real
 * one, from the library (clops_context_create_device) and through the CLI. */
START_TEST(test_device_index_past_int32)
{
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    char want[128];
    if (count == 0)
        snprintf(want, sizeof want, "but no OpenCL platform has a device");
    else
        snprintf(want, sizeof want, "requested, %zu device%s available", count, count == 1 ? "" : "s");
    static const unsigned indices[] = {2147483648u, 4294967295u};
    for (size_t i = 0; i < 2; i++) {
        clops_context *ctx = (clops_context *)&ctx;
        const clops_status st = clops_context_create_device(indices[i], &ctx);
        char head[64];
        snprintf(head, sizeof head, "device %u ", indices[i]);
        ck_assert_msg(st == (count ? CLOPS_ERROR_INVALID_DEVICE_SELECTION : CLOPS_ERROR_NO_DEVICE) && ctx == NULL &&
                          strstr(clops_last_error_message(), head) && strstr(clops_last_error_message(), want),
                      "device %u: %s (%s)", indices[i], clops_status_name(st), clops_last_error_message());
        char arg[16];
        snprintf(arg, sizeof arg, "%u", indices[i]);
        run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/big_index.npy", "--block-size", "2", "--device", arg,
            NULL);
        ck_assert_msg(res.exit_code == 1 && strstr(res.err, head) && strstr(res.err, want),
                      "clops run --device %s: exit %d: %.400s", arg, res.exit_code, res.err);
        run("kernels", "build", "--ops", "d2s", "--types", "uint8", "--layouts", "packed", "--device", arg, NULL);
        ck_assert_msg(res.exit_code != 0 && strstr(res.err, head) && strstr(res.err, want),
                      "clops kernels build --device %s: exit %d: %.400s", arg, res.exit_code, res.err);
    }
}
END_TEST

/* R4: a --list of only comments and blank lines (or an empty file) names no
 * binary: pack-add says so on one line and exits 1, writing nothing (it said
 * "CLOPS_ERROR_NULL_ARGUMENT: clops_pack_add_binaries: NULL argument"). */
START_TEST(test_pack_add_list_names_nothing)
{
    char pack[512], list[512];
    tmp_path(pack, sizeof pack, "empty-list.pack");
    tmp_path(list, sizeof list, "empty-list.txt");
    static const char *const lists[] = {"# SOURCE<TAB>OPTIONS<TAB>BINARY\n\n# nothing yet\n", "", "\n\n"};
    const char *args[] = {"kernels", "pack-add", pack, "--device", "0", "--list", list, NULL};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        write_bytes(list, lists[i], strlen(lists[i]));
        run_argv(args);
        ck_assert_msg(res.exit_code == 1, "list %zu: exit %d: %.400s%.400s", i, res.exit_code, res.out, res.err);
        ck_assert_msg(strstr(res.err, "empty-list.txt: names no binary") != NULL && strstr(res.err, "NULL") == NULL,
                      "list %zu: %.400s", i, res.err);
        assert_error_line("pack-add --list naming no binary");
        ck_assert_msg(!file_exists(pack), "list %zu created the pack", i);
        assert_no_temp_files();
    }
    unlink(list);
}
END_TEST

/* R6: `conformance --device N` with N past the devices is a usage error naming
 * the index and the devices there are, before anything runs or a report is
 * written; N above INT32_MAX wrapped (4294967294 ran the whole suite on the host
 * and exited 0, 4294967295 on the default device, 2147483648 was "device
 * -2147483648"). Bounded: before the fix 4294967295 ran the suite on a device. */
START_TEST(test_conformance_device_past_the_devices)
{
    size_t count = 0;
    ck_assert_int_eq(clops_device_list(NULL, 0, &count), CLOPS_SUCCESS);
    char want[128], report[512], first[24];
    if (count == 0)
        snprintf(want, sizeof want, "but no OpenCL platform has a device");
    else
        snprintf(want, sizeof want, "requested, %zu device%s available", count, count == 1 ? "" : "s");
    tmp_path(report, sizeof report, "past-the-devices.json");
    snprintf(first, sizeof first, "%zu", count);
    const char *const indices[] = {first, "2147483647", "2147483648", "4294967294", "4294967295"};
    for (size_t i = 0; i < sizeof indices / sizeof indices[0]; i++) {
        const char *args[] = {"conformance", "--device", indices[i], "--quick", "--json", report, NULL};
        run_argv_bounded(120, args);
        char head[64];
        snprintf(head, sizeof head, "device %s ", indices[i]);
        ck_assert_msg(res.exit_code == 2, "conformance --device %s: exit %d (-1: still running): %.400s%.400s",
                      indices[i], res.exit_code, res.out, res.err);
        ck_assert_msg(strstr(res.err, head) && strstr(res.err, want) && strstr(res.err, "clops conformance --help"),
                      "conformance --device %s: %.400s", indices[i], res.err);
        ck_assert_msg(strstr(res.out, "passed") == NULL, "conformance --device %s ran: %.400s", indices[i], res.out);
        ck_assert_msg(!file_exists(report), "conformance --device %s wrote a report", indices[i]);
    }
}
END_TEST

/* R7: pack-add of a binary whose source and options are not a program clops
 * asks for on the device - a `kernels list` line with one typo, words that are
 * no build options, the portable program with other options, an unknown source,
 * alone or on a line of --list - exits 1 with one error line naming the options
 * (and the list's line), and leaves the pack as it was. It said "P.pack: 1
 * entry" and exited 0: the entry was never looked up. The portable program with
 * "-cl-std=CL1.2" and listed lines are accepted. */
START_TEST(test_pack_add_not_a_program)
{
    if (!have_device) return; /* pack-add needs device 0 */
    char pack[512], bin[512], list[512], line[4000], X[400], Y[400], typo[400];
    listed_options(0, X, sizeof X);
    listed_options(1, Y, sizeof Y);
    snprintf(typo, sizeof typo, "%s", X);
    char *at = strstr(typo, "-DORDER_DCR=");
    ck_assert(at != NULL);
    at[2] = 'Q'; /* -DQRDER_DCR=...: one letter off */
    tmp_path(pack, sizeof pack, "r7.pack");
    tmp_path(bin, sizeof bin, "r7.bin");
    tmp_path(list, sizeof list, "programs.txt");
    write_bytes(bin, "not a real binary", 17);
    const char *one[] = {"kernels", "pack-add", pack, "--device", "0", "--source", "depth_space.cl", "--options", X,
                         "--binary", bin, NULL};
    run_argv(one);
    ck_assert_msg(res.exit_code == 0 && strstr(res.out, ": 1 entry"), "exit %d: %.400s%.400s", res.exit_code, res.out,
                  res.err);
    size_t len, now_len;
    unsigned char *was = slurp(pack, &len);
    const struct {
        const char *source, *options, *want;
    } bad[] = {
        {"depth_space.cl", typo, "not a program clops asks for on device 0"},
        {"depth_space.cl", "these are not build options", "not a program clops asks for on device 0"},
        {"portable.cl", "-cl-std=CL2.0", "the portable program is built with \"-cl-std=CL1.2\" alone"},
        {"nope.cl", X, "no program named nope.cl"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char named[600];
        snprintf(named, sizeof named, "(%s %s)", bad[i].source, bad[i].options);
        const char *args[] = {"kernels", "pack-add", pack, "--device", "0", "--source", bad[i].source, "--options",
                              bad[i].options, "--binary", bin, NULL};
        run_argv(args);
        ck_assert_msg(res.exit_code == 1 && strstr(res.err, bad[i].want) && strstr(res.err, named),
                      "case %zu: exit %d: %.400s%.600s", i, res.exit_code, res.out, res.err);
        assert_error_line("pack-add of options that name no program");
        /* the same on line 3 of a --list, after a good line */
        snprintf(line, sizeof line, "# SOURCE<TAB>OPTIONS<TAB>BINARY\ndepth_space.cl\t%s\t%s\n%s\t%s\t%s\n", Y, bin,
                 bad[i].source, bad[i].options, bin);
        write_bytes(list, line, strlen(line));
        const char *from_list[] = {"kernels", "pack-add", pack, "--device", "0", "--list", list, NULL};
        run_argv(from_list);
        char where[700];
        snprintf(where, sizeof where, "programs.txt:3: CLOPS_ERROR_%s: binaries[1] %s",
                 i == 3 ? "KERNEL_SOURCE_UNAVAILABLE" : "INVALID_SETTING", named);
        ck_assert_msg(res.exit_code == 1 && strstr(res.err, bad[i].want) && strstr(res.err, where),
                      "case %zu in a list: exit %d: %.400s%.600s", i, res.exit_code, res.out, res.err);
        assert_error_line("pack-add --list of options that name no program");
        unsigned char *now = slurp(pack, &now_len);
        ck_assert_msg(now_len == len && memcmp(now, was, len) == 0, "case %zu changed the pack", i);
        free(now);
        assert_no_temp_files();
    }
    free(was);
    const char *portable[] = {"kernels", "pack-add", pack, "--device", "0", "--source", "portable.cl", "--options",
                              "-cl-std=CL1.2", "--binary", bin, NULL};
    run_argv(portable);
    ck_assert_msg(res.exit_code == 0 && strstr(res.out, ": 2 entries"), "portable.cl -cl-std=CL1.2: exit %d: %.400s%.400s",
                  res.exit_code, res.out, res.err);
    unlink(pack);
    unlink(bin);
    unlink(list);
}
END_TEST

static Suite *cli_hostile_suite(void)
{
    Suite *s = suite_create("cli_hostile");
    TCase *tc = cli_case(s);
    TC_TESTS(tc, test_cache_list_short_keys, test_conformance_json_targets, test_pack_add_binary_not_regular,
             test_pack_add_list_malformed_line,
             test_json_non_utf8_path, test_timeout_from_environment, test_windows_strict_sides,
             test_device_index_past_int32, test_pack_add_list_names_nothing,
             test_conformance_device_past_the_devices, test_pack_add_not_a_program);
    return s;
}

int main(void)
{
    return cli_suite_main(cli_hostile_suite());
}
