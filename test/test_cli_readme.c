/*
 * test_cli_readme.c - the README says what is true (issue 25, item 9): its C
 * example, taken from README.md itself, is a complete program that compiles with
 * -Wall -Werror against the built library and prints DirectML's result; every
 * source path it names exists. Shared fixtures: cli_fixture.h (the suite runs
 * beside the CLI suites; CLOPS_SOURCE_DIR, CLOPS_CC, CLOPS_CFLAGS and
 * CLOPS_LIB_DIR come from ctest).
 */
#define _XOPEN_SOURCE 700
#include "cli_fixture.h"

#include <ctype.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* README.md, whole and NUL-terminated. */
static char *read_readme(void)
{
    const char *src = getenv("CLOPS_SOURCE_DIR");
    ck_assert_msg(src != NULL, "CLOPS_SOURCE_DIR is not set (ctest sets it)");
    char path[600];
    snprintf(path, sizeof path, "%s/README.md", src);
    size_t len;
    char *text = (char *)slurp(path, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    return text;
}

/* The example's code block, compiled and run: exit 0 and Y of DirectML's example. */
START_TEST(test_readme_example_runs)
{
    char *readme = read_readme();
    const char *section = strstr(readme, "\n## A short C example\n");
    ck_assert_msg(section != NULL, "README.md has no '## A short C example' section");
    const char *start = strstr(section, "\n```c\n");
    ck_assert_msg(start != NULL, "the example section has no ```c block");
    start += 6;
    const char *end = strstr(start, "\n```\n");
    ck_assert_ptr_nonnull(end);
    ck_assert_msg(strstr(section, "\n## ") == NULL || strstr(section + 1, "\n## ") > end,
                  "the code block is not in the example's section");
    char src[512], exe[512], cmd[3000], out[512];
    tmp_path(src, sizeof src, "readme_example.c");
    tmp_path(exe, sizeof exe, "readme_example");
    tmp_path(out, sizeof out, "readme_example.out");
    write_bytes(src, start, (size_t)(end - start) + 1);
    const char *cc = getenv("CLOPS_CC"), *lib = getenv("CLOPS_LIB_DIR"), *dir = getenv("CLOPS_SOURCE_DIR");
    ck_assert_msg(cc && lib && dir, "CLOPS_CC, CLOPS_LIB_DIR and CLOPS_SOURCE_DIR must be set (ctest sets them)");
    const char *flags = getenv("CLOPS_CFLAGS"); /* the build's own (a sanitizer build's runtime) */
    snprintf(cmd, sizeof cmd, "'%s' %s -std=c11 -Wall -Wextra -Werror -o '%s' '%s' -I'%s/include' -L'%s' -lclops -lOpenCL",
             cc, flags ? flags : "", exe, src, dir, lib);
    ck_assert_msg(system(cmd) == 0, "the README's example does not compile: %s", cmd);
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s' '%s' > '%s'", lib, exe, out);
    const int status = system(cmd);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the README's example failed: %s", cmd);
    size_t len;
    char *got = (char *)slurp(out, &len);
    got = realloc(got, len + 1);
    got[len] = '\0';
    /* Y[0, c, h*2+i, w*2+j] = X[0, (i*2+j)*2 + c, h, w] with X = 0..47 */
    char want[400] = "", cell[8];
    for (int r = 0; r < 8; r++)
        for (int w = 0; w < 6; w++) {
            const int c = r / 4, h = (r % 4) / 2, i = r % 2, j = w % 2;
            snprintf(cell, sizeof cell, "%2d%s", (((i * 2 + j) * 2 + c) * 2 + h) * 3 + w / 2, w == 5 ? "\n" : " ");
            strcat(want, cell);
        }
    ck_assert_str_eq(got, want);
    const char *first = strchr(want, '\n');
    char line[64];
    snprintf(line, sizeof line, "` %.*s`", (int)(first - want - 1), want + 1);
    ck_assert_msg(strstr(section, line) != NULL, "the README does not quote the first row as %s", line);
    free(got);
    unlink(src), unlink(exe), unlink(out);
    free(readme);
}
END_TEST

/* Every path under the tree's top-level directories that the README names
 * (lib/cl/scheduler.c, tools/cli/, globs such as kernels/ *.cl) exists. */
START_TEST(test_readme_paths_exist)
{
    static const char *const tops[] = {"lib/", "tools/", "test/", "kernels/", "include/", "cmake/", "notes/",
                                       "python/", ".ci/"};
    char *readme = read_readme();
    const char *dir = getenv("CLOPS_SOURCE_DIR");
    unsigned checked = 0;
    for (const char *p = readme; *p; p++) {
        if (p > readme && (isalnum((unsigned char)p[-1]) || strchr("_/.-", p[-1]))) continue;
        size_t t = 0;
        while (t < sizeof tops / sizeof tops[0] && strncmp(p, tops[t], strlen(tops[t])) != 0) t++;
        if (t == sizeof tops / sizeof tops[0]) continue;
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./*+-");
        while (n > 0 && (p[n - 1] == '.' || p[n - 1] == '-')) n--; /* the sentence's full stop */
        char pattern[700];
        snprintf(pattern, sizeof pattern, "%s/%.*s", dir, (int)n, p);
        glob_t g;
        const int found = glob(pattern, 0, NULL, &g) == 0;
        if (found) globfree(&g);
        ck_assert_msg(found, "README.md names %.*s, which does not exist", (int)n, p);
        checked++;
        p += n - 1;
    }
    ck_assert_uint_gt(checked, 20);
    free(readme);
}
END_TEST

static Suite *cli_readme_suite(void)
{
    Suite *s = suite_create("cli_readme");
    TCase *tc = cli_case(s);
    TC_TESTS(tc, test_readme_example_runs, test_readme_paths_exist);
    return s;
}

int main(void)
{
    return cli_suite_main(cli_readme_suite());
}
