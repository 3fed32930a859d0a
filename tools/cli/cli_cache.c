/* cli_cache.c - clops cache SUBCOMMAND: where the program cache is, its entries,
 * clearing and pruning it, kernel packs. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "cli.h"
#include "cli_json.h"

/* Prints `n` bytes of a key (which a pack may have brought from anywhere) with
 * every byte that is not printable ASCII - escape sequences too - as \xNN. */
static void print_escaped(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') putchar(c);
        else printf("\\x%02x", c);
    }
}

static void print_entry(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
                        size_t key_len)
{
    (void)user;
    char when[32] = "?";
    const time_t t = (time_t)last_used;
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    if (!key && strncmp(file, ".tmp-", 5) == 0) {
        printf("%s  %10" PRIu64 "  %s  (temporary file: a write in progress, or one killed before it finished;"
               " prune and clear remove it after an hour)\n", file, bytes, when);
        return;
    }
    if (!key) {
        printf("%s  %10" PRIu64 "  %s  (invalid entry: removed when next read)\n", file, bytes, when);
        return;
    }
    /* The key's "device:" and "options:" lines say what the binary is for. */
    const char *dev = NULL, *opt = NULL;
    size_t dev_len = 0, opt_len = 0;
    for (const char *p = key; p < key + key_len;) {
        const char *nl = memchr(p, '\n', (size_t)(key + key_len - p));
        const size_t len = nl ? (size_t)(nl - p) : (size_t)(key + key_len - p);
        if (len > 8 && memcmp(p, "device: ", 8) == 0) dev = p + 8, dev_len = len - 8;
        if (len > 9 && memcmp(p, "options: ", 9) == 0) opt = p + 9, opt_len = len - 9;
        if (len >= 7 && memcmp(p, "source:", 7) == 0) break;
        p += len + 1;
    }
    printf("%s  %10" PRIu64 "  %s  ", file, bytes, when);
    print_escaped(dev ? dev : "", dev_len);
    fputs("  ", stdout);
    print_escaped(opt ? opt : "", opt_len);
    putchar('\n');
}

static int run_cache_path(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    (void)args;
    char status[4300];
    puts(clops_cache_status(status, sizeof status));
    return EXIT_OK;
}

/* "VERB N entries TAIL" after a counting cache call, or its error line. */
static int report_count(const char *what, clops_status st, const char *verb, size_t n, const char *tail)
{
    if (st != CLOPS_SUCCESS) return fail_clops(what, st);
    printf("%s%s%zu entr%s%s\n", verb, verb[0] ? " " : "", n, n == 1 ? "y" : "ies", tail);
    return EXIT_OK;
}

/* --json: one object per entry, its key's lines before the source as "key". */
static void add_entry(void *user, const char *file, uint64_t bytes, long long last_used, const char *key,
                      size_t key_len)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddNumberToObject(o, "bytes", (double)bytes);
    cJSON_AddNumberToObject(o, "last_used", (double)last_used);
    cJSON_AddBoolToObject(o, "valid", key != NULL);
    if (key) {
        /* The key is key_len bytes, not a C string: every look stays inside them. */
        size_t head = 0;
        while (head < key_len && !(key_len - head >= 8 && memcmp(key + head, "\nsource:", 8) == 0)) head++;
        char *text = malloc(head + 1);
        if (text) memcpy(text, key, head), text[head] = '\0';
        cJSON_AddStringToObject(o, "key", text ? text : "");
        free(text);
    }
    cJSON_AddItemToArray(user, o);
}

static int run_cache_list(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    size_t n = 0;
    if (args->json) {
        cJSON *root = cJSON_CreateObject();
        char status[4300];
        cJSON_AddStringToObject(root, "cache", clops_cache_status(status, sizeof status));
        const clops_status st = clops_cache_list_entries(add_entry, cJSON_AddArrayToObject(root, "entries"), &n);
        if (st != CLOPS_SUCCESS) {
            cJSON_Delete(root);
            return fail_clops("cache list", st);
        }
        return cli_json_print(root) == 0 ? EXIT_OK : EXIT_FAIL;
    }
    const clops_status st = clops_cache_list_entries(print_entry, NULL, &n);
    return report_count("cache list", st, "", n, "");
}

static int run_cache_clear(const cli_command *cmd, const cli_args *args)
{
    (void)cmd, (void)args;
    size_t n = 0;
    const clops_status st = clops_cache_clear_all(&n);
    return report_count("cache clear", st, "removed", n, "");
}

static int run_cache_prune(const cli_command *cmd, const cli_args *args)
{
    (void)cmd, (void)args;
    size_t n = 0;
    const clops_status st = clops_cache_prune(&n);
    return report_count("cache prune", st, "evicted", n, "");
}

static int run_cache_export(const cli_command *cmd, const cli_args *args)
{
    const char *path = args->positional[0];
    char tail[4200];
    snprintf(tail, sizeof tail, " to %s", path);
    size_t n = 0;
    const clops_status st = clops_cache_export_pack(path, &n);
    return report_count(cmd->name, st, "exported", n, tail);
}

/* "imported N of M entries from FILE", then one line per kind of skipped entry. */
static int run_cache_import(const cli_command *cmd, const cli_args *args)
{
    const char *path = args->positional[0];
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(path, &r);
    if (st != CLOPS_SUCCESS) return fail_clops(cmd->name, st);
    printf("imported %zu of %zu entr%s from %s\n", r.imported, r.entries, r.entries == 1 ? "y" : "ies", path);
    if (r.within_pack) printf("  skipped %zu duplicate%s within the pack\n", r.within_pack, r.within_pack == 1 ? "" : "s");
    if (r.duplicates > r.within_pack) printf("  skipped %zu already in the cache\n", r.duplicates - r.within_pack);
    if (r.other_device) printf("  skipped %zu for a device or clops version this machine does not have\n", r.other_device);
    if (r.over_limit) printf("  skipped %zu that would exceed CLOPS_CACHE_MAX_SIZE\n", r.over_limit);
    if (r.rejected) printf("  rejected %zu; the first: %s\n", r.rejected, r.reason);
    return EXIT_OK;
}

static const cli_command cache_commands[] = {
    {"cache path", "", 0, "Prints where the program cache is (read-write or read-only), or why it is off.",
     help_only_options, NULL, run_cache_path},
    {"cache list", "", 0, "Lists the cached program binaries, least recently used first.", json_options, NULL,
     run_cache_list},
    {"cache clear", "", 0, "Removes every cached program binary.", help_only_options, NULL, run_cache_clear},
    {"cache prune", "", 0,
     "Evicts least recently used entries until the cache is within CLOPS_CACHE_MAX_SIZE (default 256M).",
     help_only_options, NULL, run_cache_prune},
    {"cache export", "FILE", 1,
     "Writes every valid cached binary to one kernel pack FILE, to give a device that\n"
     "cannot compile at run time (an FPGA built offline) its prebuilt programs.",
     help_only_options, NULL, run_cache_export},
    {"cache import", "FILE", 1,
     "Checks every entry of a kernel pack FILE, loads each on its device in a child\n"
     "process, and installs those that load (a report says what was skipped and why).",
     help_only_options, NULL, run_cache_import},
};
#define CACHE_COMMAND_COUNT (sizeof(cache_commands) / sizeof(cache_commands[0]))

void cli_cache_usage(FILE *out)
{
    for (size_t i = 0; i < CACHE_COMMAND_COUNT; i++)
        print_command_usage(out, "  ", &cache_commands[i]);
}

int cli_cache_main(int argc, char **argv)
{
    argc--, argv++; /* after "cache" */
    if (argc < 1 || is_help(argv[0])) {
        FILE *out = argc < 1 ? stderr : stdout;
        fputs("usage: clops cache SUBCOMMAND\n\nsubcommands:\n", out);
        for (size_t i = 0; i < CACHE_COMMAND_COUNT; i++) print_command_usage(out, "  ", &cache_commands[i]);
        return argc < 1 ? EXIT_USAGE : EXIT_OK;
    }
    for (size_t i = 0; i < CACHE_COMMAND_COUNT; i++)
        if (strcmp(argv[0], cache_commands[i].name + 6) == 0)
            return dispatch(&cache_commands[i], argc - 1, argv + 1);
    char err[ERR_SIZE];
    set_err(err, sizeof err, "unknown cache subcommand '%s' (path, list, clear, prune, export, import)", argv[0]);
    fprintf(stderr, "clops: %s\nTry 'clops cache --help'.\n", err);
    return EXIT_USAGE;
}
