/* cli_main.c - the `clops` command's top level: the list of its commands (the
 * one place a command is registered), the top-level help and the dispatch. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>

#include "bench.h"
#include "cli.h"
#include "conformance.h"

/* A top-level command: one cli_command (parsed from its option table and run by
 * dispatch), or a main of its own (a group of subcommands, or the benchmarks)
 * that gets argv from the command's word on and prints its own help lines. */
typedef struct cli_entry {
    const char *word;
    const cli_command *command;
    int (*main)(int argc, char **argv);
    void (*usage)(FILE *out); /* its lines in 'clops --help' */
} cli_entry;

static void bench_usage(FILE *out)
{
    fputs("  clops bench [options]\n", out);
}

static void bench_startup_usage(FILE *out)
{
    fputs("  clops bench-startup [options]\n", out);
}

/* Every command, in the order 'clops --help' lists them. */
static const cli_entry commands[] = {
    {"run", NULL, cli_run_main, cli_run_usage},
    {"devices", &cli_devices_command, NULL, NULL},
    {"print", &cli_print_command, NULL, NULL},
    {"cache", NULL, cli_cache_main, cli_cache_usage},
    {"tune", &cli_tune_command, NULL, NULL},
    {"kernels", NULL, cli_kernels_main, cli_kernels_usage},
    {"bench", NULL, clops_bench_main, bench_usage},
    {"bench-startup", NULL, clops_bench_startup_main, bench_startup_usage},
    {"conformance", &cli_conformance_command, NULL, NULL},
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static void print_top_help(FILE *out)
{
    fprintf(out,
            "usage: clops COMMAND [ARGS] [options]\n"
            "\n"
            "clops %s: DirectML-style tensor operators on OpenCL devices or the host.\n"
            "\n"
            "commands:\n",
            clops_version_string());
    for (size_t i = 0; i < COMMAND_COUNT; i++) {
        if (commands[i].command)
            print_command_usage(out, "  ", commands[i].command);
        else
            commands[i].usage(out);
    }
    fputs("\nEvery command takes -h/--help. Exit status: 0 success, 1 operator or file\n"
          "error, 2 usage error.\n",
          out);
}

int clops_cli_main(int argc, char **argv)
{
    /* A remote device's socket closing under a write (PoCL-Remote, a killed pocld)
     * must come back as an error, not end the process with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        print_top_help(stderr);
        return EXIT_USAGE;
    }
    const char *word = argv[1];
    if (is_help(word) || strcmp(word, "help") == 0) {
        print_top_help(stdout);
        return EXIT_OK;
    }
    if (strcmp(word, "--version") == 0) {
        printf("clops %s\n", clops_version_string());
        return EXIT_OK;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(word, commands[i].word) == 0)
            return commands[i].command ? dispatch(commands[i].command, argc - 2, argv + 2)
                                       : commands[i].main(argc - 1, argv + 1);
    char err[ERR_SIZE];
    set_err(err, sizeof err, "unknown command '%s'", word);
    return usage_error(NULL, err);
}
