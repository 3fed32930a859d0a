/*
 * test_doc_links.c - the documentation's links lead somewhere (issue 27, item 1):
 * every relative link in README.md and docs/ *.md names a file or directory of the
 * tree, and a link with an #anchor names a heading of that Markdown file (the
 * anchor GitHub makes of it); README.md links every docs/ *.md. No device, no
 * library: CLOPS_SOURCE_DIR comes from ctest.
 */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The whole file, NUL-terminated; NULL if it cannot be read. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    while ((got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            cap *= 2;
            text = realloc(text, cap);
            ck_assert_ptr_nonnull(text);
        }
    }
    fclose(f);
    text[len] = '\0';
    return text;
}

/* GitHub's anchor for a heading's text (n bytes): lower case; letters, digits, '-'
 * and '_' kept, each space a '-', everything else (punctuation, '`', '*') dropped;
 * bytes of UTF-8 sequences kept as they are. */
static void slug(const char *heading, size_t n, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < size; i++) {
        const unsigned char c = (unsigned char)heading[i];
        if (c >= 'A' && c <= 'Z') out[o++] = (char)(c - 'A' + 'a');
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c >= 0x80)
            out[o++] = (char)c;
        else if (c == ' ') out[o++] = '-';
    }
    out[o] = '\0';
}

/* Whether line (up to '\n') opens or closes a fenced code block. */
static int is_fence(const char *line)
{
    while (*line == ' ') line++;
    return strncmp(line, "```", 3) == 0 || strncmp(line, "~~~", 3) == 0;
}

/* Whether the Markdown `text` has a heading whose anchor is `anchor` (a repeated
 * heading's anchors are numbered: x, x-1, x-2, ...). */
static int has_anchor(const char *text, const char *anchor)
{
    enum { MAX_HEADINGS = 1024 };
    static char seen[MAX_HEADINGS][160];
    size_t n_seen = 0;
    int fenced = 0;
    for (const char *line = text; *line; ) {
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        if (is_fence(line)) fenced = !fenced;
        else if (!fenced && line[0] == '#') {
            const char *h = line;
            while (h < eol && *h == '#') h++;
            if (h - line <= 6 && h < eol && *h == ' ') {
                const char *end = eol;
                while (end > h && (end[-1] == ' ' || end[-1] == '#' || end[-1] == '\r')) end--;
                char base[160], s[180];
                slug(h + 1, (size_t)(end - h - 1 > 0 ? end - h - 1 : 0), base, sizeof base);
                unsigned repeats = 0;
                for (size_t i = 0; i < n_seen; i++) repeats += strcmp(seen[i], base) == 0;
                if (repeats) snprintf(s, sizeof s, "%s-%u", base, repeats);
                else snprintf(s, sizeof s, "%s", base);
                if (strcmp(s, anchor) == 0) return 1;
                ck_assert_uint_lt(n_seen, MAX_HEADINGS);
                snprintf(seen[n_seen++], sizeof seen[0], "%s", base);
            }
        }
        line = *eol ? eol + 1 : eol;
    }
    return 0;
}

/* Checks every inline link [text](target) of the Markdown `text`, the file `path`
 * (links outside code spans and fenced blocks; absolute URLs are not checked),
 * appending one line per broken link to `problems`. Returns the links checked. */
static unsigned check_links(const char *path, const char *text, char *problems, size_t size)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    unsigned checked = 0;
    int fenced = 0;
    unsigned line_no = 1;
    for (const char *line = text; *line; line_no++) {
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        if (is_fence(line)) fenced = !fenced;
        else if (!fenced) {
            int code = 0;
            for (const char *p = line; p + 1 < eol; p++) {
                if (*p == '`') code = !code;
                if (code || p[0] != ']' || p[1] != '(') continue;
                const char *t = p + 2, *close = t;
                while (close < eol && *close != ')' && *close != ' ') close++;
                char target[600];
                snprintf(target, sizeof target, "%.*s", (int)(close - t), t);
                p = close - 1;
                if (strstr(target, "://") || strncmp(target, "mailto:", 7) == 0) continue;
                checked++;
                char *hash = strchr(target, '#');
                const char *anchor = NULL;
                if (hash) *hash = '\0', anchor = hash + 1;
                char file[1700];
                snprintf(file, sizeof file, "%s/%s", dir, target);
                struct stat st;
                char problem[2600] = "";
                if (!target[0]) { /* #anchor: this file's own text */
                    if (anchor && !has_anchor(text, anchor))
                        snprintf(problem, sizeof problem, "%s:%u: (this file)#%s: no heading with that anchor\n",
                                 path, line_no, anchor);
                } else if (stat(file, &st) != 0) {
                    snprintf(problem, sizeof problem, "%s:%u: %s: no such file\n", path, line_no, target);
                } else if (anchor) {
                    const size_t len = strlen(file);
                    char *linked = len > 3 && strcmp(file + len - 3, ".md") == 0 ? read_text(file) : NULL;
                    if (!linked)
                        snprintf(problem, sizeof problem, "%s:%u: %s#%s: an anchor into a file that is not Markdown\n",
                                 path, line_no, target, anchor);
                    else if (!has_anchor(linked, anchor))
                        snprintf(problem, sizeof problem, "%s:%u: %s#%s: no heading with that anchor\n", path,
                                 line_no, target[0] ? target : "(this file)", anchor);
                    free(linked);
                }
                strncat(problems, problem, size - strlen(problems) - 1);
            }
        }
        line = *eol ? eol + 1 : eol;
    }
    return checked;
}

/* The anchors GitHub gives the headings the documentation links to. */
START_TEST(test_slug)
{
    static const char *const cases[][2] = {
        {"Set up and run (Debian 12)", "set-up-and-run-debian-12"},
        {"The API (`include/clops/clops.h`, `include/clops/clops_errors.h`)",
         "the-api-includeclopsclopsh-includeclopsclops_errorsh"},
        {"Architecture: one call from the header to the kernel and back",
         "architecture-one-call-from-the-header-to-the-kernel-and-back"},
        {"Scaling out (PoCL-Remote)", "scaling-out-pocl-remote"},
        {"Operators, types and orders", "operators-types-and-orders"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s[200];
        slug(cases[i][0], strlen(cases[i][0]), s, sizeof s);
        ck_assert_str_eq(s, cases[i][1]);
    }
    const char *text = "# A\n\n## Notes\n\n```\n## Code\n```\n\n### Notes ###\n";
    ck_assert(has_anchor(text, "a"));
    ck_assert(has_anchor(text, "notes"));
    ck_assert(has_anchor(text, "notes-1"));
    ck_assert(!has_anchor(text, "notes-2"));
    ck_assert(!has_anchor(text, "code")); /* inside a fenced block: not a heading */
}
END_TEST

/* The checker finds a missing file and a missing anchor, and only those. */
START_TEST(test_broken_links_found)
{
    const char *src = getenv("CLOPS_SOURCE_DIR");
    ck_assert_msg(src != NULL, "CLOPS_SOURCE_DIR is not set (ctest sets it)");
    char path[600];
    snprintf(path, sizeof path, "%s/docs/virtual.md", src); /* links resolve from docs/ */
    const char *text = "# Here\n\n## Python\n\n"
                       "[ok](../README.md) [ok](../README.md#documentation) [ok](#python) [ok](api.md)\n"
                       "[url](https://example.com/x#y) `[code](gone.md)`\n"
                       "```\n[fenced](gone.md)\n```\n"
                       "[missing](no-such-file.md) [bad anchor](../README.md#no-such-heading)\n"
                       "[bad self](#nowhere) [dir](../lib/)\n";
    char problems[8000] = "";
    const unsigned n = check_links(path, text, problems, sizeof problems);
    ck_assert_uint_eq(n, 8);
    ck_assert_msg(strstr(problems, ":10: no-such-file.md: no such file\n") != NULL, "%s", problems);
    ck_assert_msg(strstr(problems, ":10: ../README.md#no-such-heading: no heading with that anchor\n") != NULL, "%s",
                  problems);
    ck_assert_msg(strstr(problems, ":11: (this file)#nowhere: no heading with that anchor\n") != NULL, "%s",
                  problems);
    unsigned lines = 0;
    for (const char *p = problems; (p = strchr(p, '\n')) != NULL; p++) lines++;
    ck_assert_msg(lines == 3, "%s", problems);
}
END_TEST

/* README.md and docs/ *.md: every relative link resolves; README.md links every guide. */
START_TEST(test_doc_links)
{
    const char *src = getenv("CLOPS_SOURCE_DIR");
    ck_assert_msg(src != NULL, "CLOPS_SOURCE_DIR is not set (ctest sets it)");
    char pattern[600], readme_path[600];
    snprintf(pattern, sizeof pattern, "%s/docs/*.md", src);
    snprintf(readme_path, sizeof readme_path, "%s/README.md", src);
    glob_t g;
    ck_assert_int_eq(glob(pattern, 0, NULL, &g), 0);
    ck_assert_uint_gt(g.gl_pathc, 5);
    char *readme = read_text(readme_path);
    ck_assert_ptr_nonnull(readme);
    static char problems[1 << 16];
    problems[0] = '\0';
    unsigned checked = check_links(readme_path, readme, problems, sizeof problems);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *text = read_text(g.gl_pathv[i]);
        ck_assert_ptr_nonnull(text);
        checked += check_links(g.gl_pathv[i], text, problems, sizeof problems);
        free(text);
        char link[300];
        snprintf(link, sizeof link, "](docs/%s)", strrchr(g.gl_pathv[i], '/') + 1);
        ck_assert_msg(strstr(readme, link) != NULL, "README.md does not link %s", g.gl_pathv[i]);
    }
    ck_assert_msg(problems[0] == '\0', "broken links:\n%s", problems);
    ck_assert_uint_gt(checked, 30);
    free(readme);
    globfree(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("doc_links");
    TCase *tc = tcase_create("links");
    tcase_add_test(tc, test_slug);
    tcase_add_test(tc, test_broken_links_found);
    tcase_add_test(tc, test_doc_links);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
