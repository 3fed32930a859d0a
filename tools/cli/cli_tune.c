/* cli_tune.c - clops tune: the tuner on one device, its progress on stdout. */
#include "cli.h"
#include "cli_json.h"

static const cli_option tune_options[] = {
    {"--device", "N", 0, opt_device, "tune device N of 'clops devices' (default: the default device)", 0},
    CLI_FLAG("--quick", quick, "tune only uint8 and float32 at block size 2 (about a minute)"),
    OPT_JSON, OPT_HELP, OPT_END};


/* One result a line; the winner's vector width is "16B" on the vector-rows kernels, "-" elsewhere. */
static void print_tune_progress(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    (void)user;
    char vector[16] = "-";
    if (r->vector_bytes) snprintf(vector, sizeof vector, "%uB", r->vector_bytes);
    printf("[%2u/%u] %-14s %s %-10s block %u: chunk %4u local %zu,%zu,%zu vector %3s  %7.2f GB/s (default %7.2f, "
           "x%.2f)%s\n",
           done, total, r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "depth-to-space" : "space-to-depth",
           r->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "dcr" : "crd", clops_data_type_name(r->data_type),
           r->block_size, r->chunk, r->local[0], r->local[1], r->local[2], vector, r->gbps, r->default_gbps,
           r->default_gbps > 0 ? r->gbps / r->default_gbps : 0.0, r->kept ? "" : "  default kept");
    fflush(stdout);
}

/* --json: every result as it is measured, printed at the end with the status. */
static void add_tune_result(void *user, const clops_tune_result *r, unsigned done, unsigned total)
{
    (void)done, (void)total;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "operator",
                            r->operator_type == CLOPS_OPERATOR_DEPTH_TO_SPACE ? "depth-to-space" : "space-to-depth");
    cJSON_AddStringToObject(o, "order", r->order == CLOPS_ORDER_DEPTH_COLUMN_ROW ? "dcr" : "crd");
    cJSON_AddStringToObject(o, "data_type", clops_data_type_name(r->data_type));
    cJSON_AddNumberToObject(o, "block_size", r->block_size);
    cJSON_AddNumberToObject(o, "chunk", r->chunk);
    cJSON *local = cJSON_AddArrayToObject(o, "local");
    for (int d = 0; d < 3; d++) cJSON_AddItemToArray(local, cJSON_CreateNumber((double)r->local[d]));
    cJSON_AddNumberToObject(o, "vector_bytes", r->vector_bytes); /* 0: the winner runs no vector-rows kernel */
    cJSON_AddNumberToObject(o, "gbps", r->gbps);
    cJSON_AddNumberToObject(o, "default_gbps", r->default_gbps);
    cJSON_AddBoolToObject(o, "kept", r->kept);
    cJSON_AddItemToArray(user, o);
}

static int run_tune(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    if (args->device == DEVICE_HOST) return fail_line("tune", "the host backend has nothing to tune");
    unsigned index = args->device_index;
    if (args->device == DEVICE_DEFAULT) {
        int host = 0;
        const clops_status st = clops_default_device(&host, &index);
        if (st != CLOPS_SUCCESS) return fail_clops("tune", st);
        if (host) return fail_line("tune", "the default device is the host backend; nothing to tune");
    }
    /* Where the results go: the device's database file, and the cache's state apart. */
    char status[4300], database[4300] = "";
    clops_cache_status(status, sizeof status);
    clops_context *ctx = NULL;
    if (clops_context_create_device(index, &ctx) == CLOPS_SUCCESS) {
        clops_context_tuning_db(ctx, database, sizeof database);
        snprintf(status, sizeof status, "%s", clops_context_cache_status(ctx));
    }
    clops_context_free(ctx);
    if (args->json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddNumberToObject(root, "device", index);
        cJSON_AddStringToObject(root, "database", database);
        cJSON_AddStringToObject(root, "cache", status);
        cJSON_AddBoolToObject(root, "quick", args->quick);
        cJSON *results = cJSON_AddArrayToObject(root, "results");
        const clops_status st = clops_tune(index, args->quick, add_tune_result, results);
        cJSON_AddStringToObject(root, "status", clops_status_name(st));
        cJSON_AddStringToObject(root, "message", st == CLOPS_SUCCESS ? "" : clops_last_error_message());
        const int printed = cli_json_print(root);
        return st != CLOPS_SUCCESS || printed != 0 ? EXIT_FAIL : EXIT_OK;
    }
    printf("tuning device %u; results go to %s (program cache: %s)\n", index, database[0] ? database : "(none)",
           status);
    const clops_status st = clops_tune(index, args->quick, print_tune_progress, NULL);
    if (st != CLOPS_SUCCESS) return fail_clops("tune", st);
    puts("tuning database written");
    return EXIT_OK;
}

const cli_command cli_tune_command = {
    "tune", "", 0,
    "Times candidate work-group sizes, per-work-item chunk lengths, loops and the\n"
    "vector-rows kernels' vector widths (GPUs) of DepthToSpace and SpaceToDepth on a\n"
    "device (median of 5 profiled runs each, every candidate's output checked) and\n"
    "stores the winners in the device's tuning database beside the program cache,\n"
    "each as soon as it is measured (merged with what other tuners write; a winner is\n"
    "kept only if it beats the default when measured again). Each line shows the\n"
    "winner's chunk, local size and bytes per vector (\"-\": no vector-rows kernel).\n"
    "The losing candidates' binaries are removed from the cache. CLOPS_TUNE=off makes\n"
    "operators ignore the database.",
    tune_options, NULL, run_tune};
