/*
 * test_manpage.c - docs/clops.1 and the CLI cannot drift apart (issue 27, item 3).
 * The page's layout (its header comment): a ".SS clops WORDS OPERANDS" per
 * command in COMMANDS, each option a ".TP" tag "--name METAVAR" under it; the
 * ENVIRONMENT section a ".TP" tag per variable. Against the built CLI:
 *   - the commands 'clops --help' lists are exactly the page's subsections, with
 *     the operands of 'clops WORDS --help's usage line;
 *   - under each, exactly the long options and metavars 'clops WORDS --help'
 *     lists, and each of them is accepted by the CLI's parser (run with bogus
 *     arguments after it so that nothing runs: exit 2, the option not refused);
 *   - the top-level options of OPTIONS exit 0 with output;
 *   - every CLOPS_* variable lib/core/options.c names and the tools (tools/,
 *     any depth) getenv() is in ENVIRONMENT, and ENVIRONMENT names no other.
 * Shared fixtures: cli_fixture.h; CLOPS_SOURCE_DIR comes from ctest.
 */
#define _XOPEN_SOURCE 700
#include "cli_fixture.h"

#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

#define MAX_ITEMS 64
#define WORD 64

typedef struct option_entry {
    char name[WORD];
    char metavar[WORD]; /* "" for a flag */
} option_entry;

typedef struct command_entry {
    char words[WORD];    /* "run depth-to-space" */
    char operands[WORD]; /* "IN.npy OUT.npy" */
    option_entry options[MAX_ITEMS];
    unsigned noptions;
} command_entry;

typedef struct page {
    command_entry commands[MAX_ITEMS];
    unsigned ncommands;
    char top_options[MAX_ITEMS][WORD]; /* OPTIONS: "-h", "--help", "help", "--version" */
    unsigned ntop;
    char env[MAX_ITEMS][WORD]; /* the CLOPS_* variables of ENVIRONMENT */
    unsigned nenv;
} page;

static char *read_text(const char *path)
{
    size_t len;
    char *text = (char *)slurp(path, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    return text;
}

static const char *source_dir(void)
{
    const char *src = getenv("CLOPS_SOURCE_DIR");
    ck_assert_msg(src != NULL, "CLOPS_SOURCE_DIR is not set (ctest sets it)");
    return src;
}

/* A roff line's text: \- and \e as the characters they print, font changes,
 * \c, \& and named characters (\(xx) dropped, quotes as blanks. */
static void unroff(const char *in, char *out, size_t size)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < size; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            if (*p == '-') out[o++] = '-';
            else if (*p == 'e') out[o++] = '\\';
            else if (*p == 'f') p += p[1] ? 1 : 0;         /* \fB \fI \fR \fP */
            else if (*p == '(') p += p[1] && p[2] ? 2 : 0; /* \(lq \(ha ... */
            continue;                                      /* \c \& */
        }
        out[o++] = *p == '"' ? ' ' : *p;
    }
    out[o] = '\0';
}

/* The next blank-separated token of *s into tok ("" at the end). */
static const char *next_token(const char **s, char *tok)
{
    while (**s == ' ' || **s == '\t') (*s)++;
    size_t n = strcspn(*s, " \t");
    ck_assert_uint_lt(n, WORD);
    memcpy(tok, *s, n);
    tok[n] = '\0';
    *s += n;
    return tok;
}

static int is_command_word(const char *t)
{
    return t[0] >= 'a' && t[0] <= 'z' && strspn(t, "abcdefghijklmnopqrstuvwxyz-") == strlen(t);
}

/* "clops WORDS OPERANDS" (tokens in s, after "clops") into c's words and operands;
 * the operands end at an option or a bracket. */
static void split_command(const char *s, command_entry *c)
{
    char tok[WORD];
    c->words[0] = c->operands[0] = '\0';
    int in_words = 1;
    while (*next_token(&s, tok)) {
        if (tok[0] == '-' || tok[0] == '[') break;
        in_words = in_words && is_command_word(tok);
        char *dst = in_words ? c->words : c->operands;
        ck_assert_uint_lt(strlen(dst) + strlen(tok) + 2, WORD);
        if (*dst) strcat(dst, " ");
        strcat(dst, tok);
    }
}

static page *parse_page(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/docs/clops.1", source_dir());
    char *text = read_text(path);
    page *pg = calloc(1, sizeof *pg);
    char section[WORD] = "", line[1024], plain[1024], tok[WORD];
    int tag_next = 0;
    for (char *p = text; *p;) {
        const size_t n = strcspn(p, "\n");
        ck_assert_uint_lt(n, sizeof line);
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (p[n] == '\n');
        /* the text after a macro's name ("" for a macro with no text) */
        const char *args = line[0] == '.' ? line + 1 + strcspn(line + 1, " ") : line;
        unroff(args, plain, sizeof plain);
        const char *s = plain;
        if (strncmp(line, ".SH ", 4) == 0) {
            snprintf(section, sizeof section, "%s", plain + strspn(plain, " "));
        } else if (strncmp(line, ".SS ", 4) == 0 && strcmp(section, "COMMANDS") == 0) {
            ck_assert_uint_lt(pg->ncommands, MAX_ITEMS);
            command_entry *c = &pg->commands[pg->ncommands++];
            ck_assert_msg(strcmp(next_token(&s, tok), "clops") == 0, "clops.1: a COMMANDS subsection not "
                          "'clops ...': %s", line);
            split_command(s, c);
            ck_assert_msg(c->words[0] != '\0', "clops.1: no command words in: %s", line);
            for (unsigned i = 0; i + 1 < pg->ncommands; i++)
                ck_assert_msg(strcmp(pg->commands[i].words, c->words) != 0, "clops.1: two sections for "
                              "'clops %s'", c->words);
        } else if (strcmp(line, ".TP") == 0) {
            tag_next = 1;
            continue;
        } else if (tag_next && strcmp(section, "COMMANDS") == 0 && pg->ncommands > 0) {
            command_entry *c = &pg->commands[pg->ncommands - 1];
            while (*next_token(&s, tok) && strncmp(tok, "--", 2) != 0) {}
            ck_assert_msg(tok[0] != '\0', "clops.1: a tag with no --option under 'clops %s': %s", c->words, line);
            ck_assert_uint_lt(c->noptions, MAX_ITEMS);
            option_entry *o = &c->options[c->noptions++];
            snprintf(o->name, sizeof o->name, "%s", tok);
            snprintf(o->metavar, sizeof o->metavar, "%s", next_token(&s, tok));
            for (unsigned i = 0; i + 1 < c->noptions; i++)
                ck_assert_msg(strcmp(c->options[i].name, o->name) != 0, "clops.1: %s twice under 'clops %s'",
                              o->name, c->words);
        } else if (tag_next && strcmp(section, "OPTIONS") == 0) {
            while (*next_token(&s, tok) && pg->ntop < MAX_ITEMS)
                if (strcmp(tok, ",") != 0) snprintf(pg->top_options[pg->ntop++], WORD, "%s", tok);
        } else if (tag_next && strcmp(section, "ENVIRONMENT") == 0) {
            while (*next_token(&s, tok))
                if (strncmp(tok, "CLOPS_", 6) == 0 && pg->nenv < MAX_ITEMS) snprintf(pg->env[pg->nenv++], WORD, "%s", tok);
        }
        tag_next = 0;
    }
    free(text);
    return pg;
}

/* Runs clops with the command's words and then `extra` (NULL-terminated). */
static void run_command(const char *words, const char *const *extra)
{
    static char buf[WORD];
    const char *args[MAX_ARGS + 1];
    unsigned n = 0;
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) args[n++] = w;
    for (; *extra; extra++) {
        ck_assert_uint_lt(n, MAX_ARGS);
        args[n++] = *extra;
    }
    args[n] = NULL;
    run_argv(args);
}

/* The command's --help, parsed: the usage line's operands and the options block. */
static void cli_help(const char *words, command_entry *c)
{
    run_command(words, (const char *const[]){"--help", NULL});
    ck_assert_msg(res.exit_code == 0, "clops %s --help exited %d: %s", words, res.exit_code, res.err);
    const char *usage = strstr(res.out, "usage: clops ");
    ck_assert_msg(usage == res.out, "clops %s --help does not start with 'usage: clops': %s", words, res.out);
    char line[1024];
    usage += strlen("usage: clops ");
    snprintf(line, sizeof line, "%.*s", (int)strcspn(usage, "\n"), usage);
    split_command(line, c);
    ck_assert_msg(strcmp(c->words, words) == 0, "clops %s --help's usage line names 'clops %s'", words, c->words);
    const char *opts = strstr(res.out, "\noptions:\n");
    ck_assert_msg(opts != NULL, "clops %s --help has no 'options:' block", words);
    c->noptions = 0;
    for (const char *p = opts + strlen("\noptions:\n"); *p == ' ';) {
        const size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        p += n + (p[n] == '\n');
        const char *s = line + strspn(line, " ");
        if (*s != '-' || s != line + 2) continue; /* a continuation line (indented further) */
        if (strncmp(s, "-h, ", 4) == 0) s += 4;
        option_entry *o = &c->options[c->noptions++];
        const size_t len = strcspn(s, " ");
        ck_assert_uint_lt(len, WORD);
        snprintf(o->name, sizeof o->name, "%.*s", (int)len, s);
        s += len;
        o->metavar[0] = '\0';
        if (s[0] == ' ' && s[1] != ' ' && s[1] != '\0') /* one blank: a metavar, two: the help text */
            snprintf(o->metavar, sizeof o->metavar, "%.*s", (int)strcspn(s + 1, " "), s + 1);
        ck_assert_uint_lt(c->noptions, MAX_ITEMS);
    }
    ck_assert_msg(c->noptions > 0, "clops %s --help lists no option", words);
}

static const option_entry *find_option(const command_entry *c, const char *name)
{
    for (unsigned i = 0; i < c->noptions; i++)
        if (strcmp(c->options[i].name, name) == 0) return &c->options[i];
    return NULL;
}

/* Every command of 'clops --help' has its subsection and no other; each lists
 * the operands and the options (with their metavars) of the command's --help. */
START_TEST(test_manpage_matches_help)
{
    page *pg = parse_page();
    ck_assert_uint_gt(pg->ncommands, 0);
    run_argv((const char *const[]){"--help", NULL});
    ck_assert_int_eq(res.exit_code, 0);
    char top[CAPTURE_SIZE];
    memcpy(top, res.out, sizeof top);
    unsigned listed = 0;
    for (const char *p = strstr(top, "\n  clops "); p; p = strstr(p + 1, "\n  clops ")) {
        command_entry want;
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(p + 9, "\n"), p + 9);
        split_command(line, &want);
        listed++;
        const command_entry *got = NULL;
        for (unsigned i = 0; i < pg->ncommands; i++)
            if (strcmp(pg->commands[i].words, want.words) == 0) got = &pg->commands[i];
        ck_assert_msg(got != NULL, "'clops --help' lists 'clops %s'; clops.1 has no subsection for it", want.words);
        cli_help(want.words, &want);
        ck_assert_msg(strcmp(got->operands, want.operands) == 0,
                      "clops.1 gives 'clops %s' the operands '%s', its --help '%s'", want.words, got->operands,
                      want.operands);
        for (unsigned i = 0; i < want.noptions; i++) {
            const option_entry *w = &want.options[i], *g = find_option(got, w->name);
            ck_assert_msg(g != NULL, "'clops %s --help' lists %s; clops.1 does not, under that command",
                          want.words, w->name);
            ck_assert_msg(strcmp(g->metavar, w->metavar) == 0,
                          "'clops %s': clops.1 has '%s %s', --help '%s %s'", want.words, g->name, g->metavar,
                          w->name, w->metavar);
        }
        for (unsigned i = 0; i < got->noptions; i++)
            ck_assert_msg(find_option(&want, got->options[i].name) != NULL,
                          "clops.1 lists %s under 'clops %s'; its --help does not", got->options[i].name,
                          want.words);
    }
    ck_assert_msg(listed == pg->ncommands, "clops.1 has %u command subsections, 'clops --help' lists %u commands",
                  pg->ncommands, listed);
    free(pg);
}
END_TEST

/* Each option of the page is one the CLI's parser takes, as a flag or with a
 * value as the page says. Bogus arguments follow it so that nothing runs: the
 * parser must refuse one of them (or the value), never the option itself. */
START_TEST(test_manpage_options_accepted)
{
    page *pg = parse_page();
    unsigned checked = 0;
    for (unsigned i = 0; i < pg->ncommands; i++) {
        const command_entry *c = &pg->commands[i];
        for (unsigned k = 0; k < c->noptions; k++) {
            const option_entry *o = &c->options[k];
            if (strcmp(o->name, "--help") == 0) continue;
            const int flag = o->metavar[0] == '\0';
            run_command(c->words, (const char *const[]){o->name, "--zz-manpage-a", flag ? NULL : "--zz-manpage-b",
                                                        NULL});
            ck_assert_msg(res.exit_code == 2, "clops %s %s --zz-manpage-a%s exited %d, not 2 (a usage error): %s",
                          c->words, o->name, flag ? "" : " --zz-manpage-b", res.exit_code, res.err);
            char refused[3][160];
            snprintf(refused[0], sizeof refused[0], "unknown option '%s", o->name);
            snprintf(refused[1], sizeof refused[1], "unknown argument '%s", o->name);
            snprintf(refused[2], sizeof refused[2], "ambiguous option '%s", o->name);
            for (int r = 0; r < 3; r++)
                ck_assert_msg(strstr(res.err, refused[r]) == NULL, "clops %s refuses clops.1's %s: %s", c->words,
                              o->name, res.err);
            if (flag) /* a flag: the next argument is what the parser refused */
                ck_assert_msg(strstr(res.err, "--zz-manpage-a") != NULL && strstr(res.err, "needs a value") == NULL,
                              "clops %s: clops.1's flag %s takes a value: %s", c->words, o->name, res.err);
            checked++;
        }
    }
    ck_assert_uint_gt(checked, 20);
    /* OPTIONS: each exits 0 with output. */
    ck_assert_uint_gt(pg->ntop, 0);
    for (unsigned i = 0; i < pg->ntop; i++) {
        run_argv((const char *const[]){pg->top_options[i], NULL});
        ck_assert_msg(res.exit_code == 0 && res.out[0] != '\0', "clops %s (clops.1's OPTIONS) exited %d: %s",
                      pg->top_options[i], res.exit_code, res.err);
    }
    free(pg);
}
END_TEST

/* Adds the CLOPS_* names in `text` that follow `before` ("\"" or "getenv(\"")
 * and end with a quote to names. */
static void collect_names(const char *text, const char *before, char names[][WORD], unsigned *n)
{
    char pattern[32];
    snprintf(pattern, sizeof pattern, "%sCLOPS_", before);
    for (const char *p = strstr(text, pattern); p; p = strstr(p + 1, pattern)) {
        const char *name = p + strlen(before);
        const size_t len = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (name[len] != '"' || len >= WORD) continue;
        unsigned i = 0;
        while (i < *n && (strlen(names[i]) != len || strncmp(names[i], name, len) != 0)) i++;
        if (i == *n && *n < MAX_ITEMS) snprintf(names[(*n)++], WORD, "%.*s", (int)len, name);
    }
}

/* The getenv("CLOPS_...") names of every .c and .h file under dir. */
static void collect_tools(const char *dir, char names[][WORD], unsigned *n)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        const size_t len = strlen(e->d_name);
        if (S_ISDIR(st.st_mode)) {
            collect_tools(path, names, n);
        } else if (len > 2 && e->d_name[len - 2] == '.' && (e->d_name[len - 1] == 'c' || e->d_name[len - 1] == 'h')) {
            char *text = read_text(path);
            collect_names(text, "getenv(\"", names, n);
            free(text);
        }
    }
    closedir(d);
}

/* ENVIRONMENT names every CLOPS_* variable clops reads, and no other. */
START_TEST(test_manpage_environment)
{
    page *pg = parse_page();
    char names[MAX_ITEMS][WORD], path[600];
    unsigned n = 0;
    snprintf(path, sizeof path, "%s/lib/core/options.c", source_dir());
    char *options = read_text(path);
    collect_names(options, "\"", names, &n);
    free(options);
    ck_assert_uint_ge(n, 5);
    snprintf(path, sizeof path, "%s/tools", source_dir());
    collect_tools(path, names, &n);
    for (unsigned i = 0; i < n; i++) {
        unsigned k = 0;
        while (k < pg->nenv && strcmp(pg->env[k], names[i]) != 0) k++;
        ck_assert_msg(k < pg->nenv, "clops reads %s; clops.1's ENVIRONMENT does not describe it", names[i]);
    }
    for (unsigned k = 0; k < pg->nenv; k++) {
        unsigned i = 0;
        while (i < n && strcmp(pg->env[k], names[i]) != 0) i++;
        ck_assert_msg(i < n, "clops.1's ENVIRONMENT describes %s, which neither lib/core/options.c nor tools/ "
                      "read", pg->env[k]);
    }
    free(pg);
}
END_TEST

static Suite *manpage_suite(void)
{
    Suite *s = suite_create("manpage");
    TCase *tc = tc_suite_case(s, "manpage", 600);
    TC_TESTS(tc, test_manpage_matches_help, test_manpage_options_accepted, test_manpage_environment);
    return s;
}

int main(void)
{
    return cli_suite_main(manpage_suite());
}
