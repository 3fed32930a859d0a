/* cli_kernels.c - clops kernels list|build|source|pack-add: ahead-of-time kernels
 * for devices that load only binaries compiled offline (FPGA flows), and building
 * programs into the cache ahead of a service's first calls.
 *
 *   list      the programs (kernel source file, its hash, build options) that
 *             the chosen operators x types x block sizes x layouts need on a
 *             device, as the library itself would ask for them
 *             (clops_programs_list); --json for scripts
 *   build     those programs into the program cache, on every core
 *             (clops_programs_prepare)
 *   source    the whole source of a kernel file, as clops compiles it
 *   pack-add  binaries built offline for listed programs, into a kernel pack
 *             (one, or a --list of them in one rewrite of the pack)
 *
 * The flow: list, write each source out, compile it with the listed options by
 * the vendor's tools, pack-add the binaries (--list: all at once), then `clops
 * cache import PACK` on the target. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "cli_json.h"
#include "store/cache.h"
#include "store/file.h"

/* ---- what to list ----------------------------------------------------------------------- */

/* The data types the --types words name (the library's selection takes any subset). */
static const clops_data_type all_types[] = {
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16,   CLOPS_DATA_TYPE_INT64,
    CLOPS_DATA_TYPE_INT32,   CLOPS_DATA_TYPE_INT16,   CLOPS_DATA_TYPE_INT8,      CLOPS_DATA_TYPE_UINT64,
    CLOPS_DATA_TYPE_UINT32,  CLOPS_DATA_TYPE_UINT16,  CLOPS_DATA_TYPE_UINT8,     CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128};
#define TYPE_COUNT (sizeof all_types / sizeof all_types[0])
#define MAX_BLOCKS 64
#define MAX_WINDOWS 16

enum { OP_D2S = CLOPS_SELECT_DEPTH_TO_SPACE, OP_S2D = CLOPS_SELECT_SPACE_TO_DEPTH, OP_UNPOOL = CLOPS_SELECT_MAX_UNPOOLING };
enum { LAYOUT_PACKED = CLOPS_SELECT_PACKED, LAYOUT_NHWC = CLOPS_SELECT_NHWC, LAYOUT_STRIDED = CLOPS_SELECT_STRIDED };

typedef struct list_request {
    unsigned device;
    int has_device;
    unsigned ops, layouts;
    bool types[TYPE_COUNT];
    uint32_t blocks[MAX_BLOCKS];
    size_t nblocks;
    uint32_t windows[MAX_WINDOWS][2];
    size_t nwindows;
    bool portable, json;
    /* the same as the library's selection (arrays above) */
    clops_data_type type_list[TYPE_COUNT];
    clops_program_selection sel;
} list_request;

/* The programs found, each once, in the order first asked for. */
typedef struct program_list {
    struct program {
        char source[64];
        char *options;
    } *items;
    size_t count, capacity;
    bool failed;
} program_list;

static void add_program(void *user, const char *source_name, const char *build_options)
{
    program_list *l = user;
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].source, source_name) == 0 && strcmp(l->items[i].options, build_options) == 0) return;
    if (l->count == l->capacity) {
        const size_t cap = l->capacity ? 2 * l->capacity : 64;
        struct program *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) {
            l->failed = true;
            return;
        }
        l->items = grown, l->capacity = cap;
    }
    struct program *p = &l->items[l->count];
    snprintf(p->source, sizeof p->source, "%s", source_name);
    p->options = strdup(build_options);
    if (p->options) l->count++;
    else l->failed = true;
}

/* Which descriptors stand for the selection, and which programs each needs, is
 * the library's (lib/api/prepare.c clops_programs_list: the same walk that
 * `clops kernels build` and Python's clops.prepare build). */

/* ---- sources and their hashes ------------------------------------------------------------ */

/* A kernel file's whole source (malloc'd), or NULL with the error printed. */
static char *read_source(const char *name, size_t *len)
{
    clops_status st = clops_program_source_text(name, NULL, 0, len);
    char *text = st == CLOPS_SUCCESS ? malloc(*len + 1) : NULL;
    if (text) st = clops_program_source_text(name, text, *len + 1, len);
    if (st != CLOPS_SUCCESS || !text) {
        free(text);
        fail_clops(name, st == CLOPS_SUCCESS ? CLOPS_ERROR_OUT_OF_HOST_MEMORY : st);
        return NULL;
    }
    return text;
}

/* FNV-1a, 64 bits, as 16 hex digits: names the exact source text a binary was built from. */
static void source_hash(const char *text, size_t len, char out[17])
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
    snprintf(out, 17, "%016" PRIx64, h);
}

/* ---- arguments ---------------------------------------------------------------------------- */

/* Calls `item` for each comma-separated word of `list`; -1 at the first it refuses. */
static int each_word(const char *list, int (*item)(list_request *, const char *), list_request *rq)
{
    char *buf = strdup(list), *save = NULL;
    int rc = buf && buf[0] ? 0 : -1;
    for (char *w = buf ? strtok_r(buf, ",", &save) : NULL; w && rc == 0; w = strtok_r(NULL, ",", &save))
        rc = item(rq, w);
    free(buf);
    return rc;
}

static int op_word(list_request *rq, const char *w)
{
    if (!strcmp(w, "all")) rq->ops |= OP_D2S | OP_S2D | OP_UNPOOL;
    else if (!strcmp(w, "depth-to-space") || !strcmp(w, "d2s")) rq->ops |= OP_D2S;
    else if (!strcmp(w, "space-to-depth") || !strcmp(w, "s2d")) rq->ops |= OP_S2D;
    else if (!strcmp(w, "max-unpooling") || !strcmp(w, "unpool")) rq->ops |= OP_UNPOOL;
    else return -1;
    return 0;
}

static int type_word(list_request *rq, const char *w)
{
    for (size_t t = 0; t < TYPE_COUNT; t++)
        if (!strcasecmp(w, "all") || !strcasecmp(w, clops_data_type_name(all_types[t]))) {
            rq->types[t] = true;
            if (strcasecmp(w, "all")) return 0;
        }
    return strcasecmp(w, "all") ? -1 : 0;
}

static int block_word(list_request *rq, const char *w)
{
    uint64_t b;
    if (parse_uint(w, UINT32_MAX, &b) != 0 || b == 0 || rq->nblocks == MAX_BLOCKS) return -1;
    rq->blocks[rq->nblocks++] = (uint32_t)b;
    return 0;
}

static int layout_word(list_request *rq, const char *w)
{
    if (!strcmp(w, "all")) rq->layouts |= LAYOUT_PACKED | LAYOUT_NHWC | LAYOUT_STRIDED;
    else if (!strcmp(w, "packed")) rq->layouts |= LAYOUT_PACKED;
    else if (!strcmp(w, "nhwc")) rq->layouts |= LAYOUT_NHWC;
    else if (!strcmp(w, "strided")) rq->layouts |= LAYOUT_STRIDED;
    else return -1;
    return 0;
}

/* KHxKW, each side a strict decimal (parse_uint: no sign, space or wrap past 2^32) from 1 to 64. */
static int window_word(list_request *rq, const char *w)
{
    const char *x = strchr(w, 'x');
    char side[24];
    uint64_t kh, kw;
    if (rq->nwindows == MAX_WINDOWS || !x || (size_t)(x - w) >= sizeof side) return -1;
    memcpy(side, w, (size_t)(x - w));
    side[x - w] = '\0';
    if (parse_uint(side, 64, &kh) != 0 || parse_uint(x + 1, 64, &kw) != 0 || kh == 0 || kw == 0) return -1;
    rq->windows[rq->nwindows][0] = (uint32_t)kh, rq->windows[rq->nwindows][1] = (uint32_t)kw;
    rq->nwindows++;
    return 0;
}

/* The --ops, --types, --blocks, --layouts and --windows words, in list_words order. */
static int (*const list_word_parsers[5])(list_request *, const char *) = {op_word, type_word, block_word,
                                                                          layout_word, window_word};
static const char *const list_word_options[5] = {"--ops", "--types", "--blocks", "--layouts", "--windows"};

/* Checks an option's word list now (a usage error), keeps it for build_request. */
static int opt_words(cli_args *args, const char *value, char *err, size_t err_size, int which)
{
    list_request scratch;
    memset(&scratch, 0, sizeof scratch);
    if (each_word(value, list_word_parsers[which], &scratch) != 0) {
        set_err(err, err_size, "%s: a word of '%s' is not one it takes (see --help)",
                list_word_options[which], value);
        return -1;
    }
    args->list_words[which] = value;
    return 0;
}
static int opt_ops(cli_args *a, const char *v, char *e, size_t n) { return opt_words(a, v, e, n, 0); }
static int opt_types(cli_args *a, const char *v, char *e, size_t n) { return opt_words(a, v, e, n, 1); }
static int opt_blocks(cli_args *a, const char *v, char *e, size_t n) { return opt_words(a, v, e, n, 2); }
static int opt_layouts(cli_args *a, const char *v, char *e, size_t n) { return opt_words(a, v, e, n, 3); }
static int opt_windows(cli_args *a, const char *v, char *e, size_t n) { return opt_words(a, v, e, n, 4); }

/* --device N: an OpenCL device (the host backend runs no kernels); opt_device's
 * parsing, less host. */
static int opt_cl_device(cli_args *args, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "host") == 0 || opt_device(args, value, err, err_size) != 0) {
        set_err(err, err_size, "--device needs a device index from 'clops devices', not '%s'", value);
        return -1;
    }
    return 0;
}

/* --jobs N: building threads. */
static int opt_jobs(cli_args *args, const char *value, char *err, size_t err_size)
{
    uint64_t v;
    if (parse_uint(value, 256, &v) != 0 || v == 0) {
        set_err(err, err_size, "--jobs needs a number of threads from 1 to 256, not '%s'", value);
        return -1;
    }
    args->jobs = (unsigned)v;
    return 0;
}

static int opt_source(cli_args *args, const char *value, char *err, size_t err_size)
{
    (void)err, (void)err_size;
    args->source = value;
    return 0;
}
static int opt_build_options(cli_args *args, const char *value, char *err, size_t err_size)
{
    (void)err, (void)err_size;
    args->build_options = value;
    return 0;
}
static int opt_binary(cli_args *args, const char *value, char *err, size_t err_size)
{
    (void)err, (void)err_size;
    args->binary = value;
    return 0;
}
static int opt_list(cli_args *args, const char *value, char *err, size_t err_size)
{
    (void)err, (void)err_size;
    args->list = value;
    return 0;
}

/* The request the parsed options make, with the defaults. */
static void build_request(const cli_args *args, list_request *rq)
{
    memset(rq, 0, sizeof *rq);
    for (int w = 0; w < 5; w++)
        if (args->list_words[w]) each_word(args->list_words[w], list_word_parsers[w], rq); /* checked by opt_words */
    rq->has_device = args->device == DEVICE_INDEX;
    rq->device = args->device_index;
    rq->portable = args->portable != 0;
    rq->json = args->json != 0;
    if (!rq->ops) rq->ops = OP_D2S | OP_S2D | OP_UNPOOL;
    if (!rq->layouts) rq->layouts = LAYOUT_PACKED | LAYOUT_NHWC | LAYOUT_STRIDED;
    bool any = false;
    for (size_t t = 0; t < TYPE_COUNT; t++) any |= rq->types[t];
    if (!any) type_word(rq, "all");
    if (!rq->nblocks)
        for (uint32_t b = 1; b <= 8; b++) rq->blocks[rq->nblocks++] = b;
    size_t ntypes = 0;
    for (size_t t = 0; t < TYPE_COUNT; t++)
        if (rq->types[t]) rq->type_list[ntypes++] = all_types[t];
    rq->sel = (clops_program_selection){rq->ops, rq->type_list, ntypes, rq->blocks, rq->nblocks,
                                        rq->layouts, &rq->windows[0][0], rq->nwindows};
}

/* ---- the subcommands -------------------------------------------------------------------- */

/* The list as text or JSON, with the hash of each distinct source file. */
static int print_list(const program_list *l, const clops_device_info *dev, bool json)
{
    char names[4][64] = {{0}}, hashes[4][17];
    size_t lens[4], nnames = 0;
    for (size_t i = 0; i < l->count; i++) {
        size_t k = 0;
        while (k < nnames && strcmp(names[k], l->items[i].source) != 0) k++;
        if (k < nnames || nnames == 4) continue;
        char *text = read_source(l->items[i].source, &lens[k]);
        if (!text) return EXIT_FAIL;
        source_hash(text, lens[k], hashes[k]);
        free(text);
        snprintf(names[nnames++], sizeof names[0], "%s", l->items[i].source);
    }
    if (!json) {
        printf("# device %u: %s; %zu programs (source, source hash, build options)\n", dev->index, dev->device_name,
               l->count);
        for (size_t i = 0; i < l->count; i++) {
            size_t k = 0;
            while (k < nnames && strcmp(names[k], l->items[i].source) != 0) k++;
            printf("%s  %s  %s\n", l->items[i].source, k < nnames ? hashes[k] : "?", l->items[i].options);
        }
        return EXIT_OK;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "clops_version", clops_version_string());
    cJSON *d = cJSON_AddObjectToObject(root, "device");
    cJSON_AddNumberToObject(d, "index", dev->index);
    cJSON_AddStringToObject(d, "name", dev->device_name);
    cJSON_AddStringToObject(d, "platform", dev->platform_name);
    cJSON *sources = cJSON_AddObjectToObject(root, "sources");
    for (size_t k = 0; k < nnames; k++) {
        cJSON *s = cJSON_AddObjectToObject(sources, names[k]);
        cJSON_AddStringToObject(s, "fnv1a64", hashes[k]);
        cJSON_AddNumberToObject(s, "bytes", (double)lens[k]);
    }
    cJSON *programs = cJSON_AddArrayToObject(root, "programs");
    for (size_t i = 0; i < l->count; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "source", l->items[i].source);
        cJSON_AddStringToObject(p, "options", l->items[i].options);
        cJSON_AddBoolToObject(p, "portable", strcmp(l->items[i].source, CLOPS_PORTABLE_SOURCE) == 0);
        cJSON_AddItemToArray(programs, p);
    }
    return cli_json_print(root) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int run_list(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    list_request rq;
    build_request(args, &rq);
    unsigned index = rq.device;
    if (!rq.has_device) {
        int host = 0;
        const clops_status st = clops_default_device(&host, &index);
        if (st != CLOPS_SUCCESS) return fail_clops("kernels list", st);
        if (host) return fail_line("kernels list", "the default device is the host backend, which runs no kernels");
    }
    clops_context *ctx = NULL;
    clops_status st = clops_context_create_device(index, &ctx);
    if (st != CLOPS_SUCCESS) return fail_clops("kernels list", st);
    clops_device_info infos[64];
    size_t n = 0;
    st = clops_device_list(infos, 64, &n);
    if (st == CLOPS_SUCCESS && index >= n) st = CLOPS_ERROR_INVALID_DEVICE_SELECTION;
    program_list list = {0};
    int rc = EXIT_FAIL;
    if (st != CLOPS_SUCCESS) {
        rc = fail_clops("kernels list", st);
    } else {
        if (rq.portable) add_program(&list, CLOPS_PORTABLE_SOURCE, CLOPS_PORTABLE_OPTIONS); /* the one program */
        else st = clops_programs_list(ctx, &rq.sel, add_program, &list);
        rc = st != CLOPS_SUCCESS ? fail_clops("kernels list", st)
             : list.failed ? fail_line("kernels list", "out of memory") : print_list(&list, &infos[index], rq.json);
    }
    for (size_t i = 0; i < list.count; i++) free(list.items[i].options);
    free(list.items);
    clops_context_free(ctx);
    return rc;
}

/* `clops kernels build`: the device the options name, else the default one
 * (an OpenCL device: the host backend has no programs); -1 with the error printed. */
static int chosen_device(const list_request *rq, const char *what, unsigned *index)
{
    *index = rq->device;
    if (rq->has_device) return 0;
    int host = 0;
    const clops_status st = clops_default_device(&host, index);
    if (st != CLOPS_SUCCESS) return fail_clops(what, st), -1;
    if (host) return fail_line(what, "the default device is the host backend, which runs no kernels"), -1;
    return 0;
}

typedef struct build_progress {
    bool tty;
    size_t width; /* of the last progress line on the terminal */
    char **failures; /* "[SOURCE OPTIONS: ]STATUS: message" */
    size_t nfailures;
} build_progress;

/* Called by the library once per finished program, never two at once. */
static void on_program(void *user, const clops_prepared_program *p)
{
    build_progress *b = user;
    const bool ok = p->status == CLOPS_SUCCESS;
    const char *what = ok ? (strcmp(p->origin, "compiled") == 0 ? "built" : "cached") : "FAILED";
    if (!ok) {
        const size_t n = strlen(p->source_name) + strlen(p->build_options) + strlen(p->message) + 128;
        char *line = malloc(n);
        char **grown = line ? realloc(b->failures, (b->nfailures + 1) * sizeof *grown) : NULL;
        if (grown) {
            if (strstr(p->message, p->build_options)) /* the message names the program already */
                snprintf(line, n, "%s: %s", clops_status_name(p->status), p->message);
            else
                snprintf(line, n, "%s %s: %s: %s", p->source_name, p->build_options, clops_status_name(p->status),
                         p->message);
            b->failures = grown;
            b->failures[b->nfailures++] = line;
        } else {
            free(line);
        }
    }
    if (b->tty) { /* one line, rewritten: the count and the latest program, cut to 100 columns */
        char line[256];
        const int n = snprintf(line, sizeof line, "[%zu/%zu] %s %s %s", p->done, p->total, what, p->source_name,
                               p->build_options);
        const size_t len = n < 0 ? 0 : (size_t)n > 100 ? 100 : (size_t)n;
        fprintf(stderr, "\r%.*s%*s", (int)len, line, (int)(b->width > len ? b->width - len : 0), "");
        b->width = len;
        if (p->done == p->total) fputc('\n', stderr);
    } else {
        fprintf(stderr, "[%zu/%zu] %s %s %s\n", p->done, p->total, what, p->source_name, p->build_options);
    }
    fflush(stderr);
}

static int run_build(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    list_request rq;
    build_request(args, &rq);
    unsigned index;
    if (chosen_device(&rq, "kernels build", &index) != 0) return EXIT_FAIL;
    build_progress b = {.tty = isatty(STDERR_FILENO) != 0};
    clops_prepare_report report;
    const clops_status st = clops_programs_prepare(index, &rq.sel, args->jobs, on_program, &b, &report);
    if (b.tty && b.width && report.total && (report.built + report.cached + report.failed) < report.total)
        fputc('\n', stderr); /* a progress line left open by an early failure */
    int rc = EXIT_OK;
    if (st != CLOPS_SUCCESS && st != CLOPS_ERROR_BUILD_FAILED) {
        rc = fail_clops("kernels build", st);
    } else {
        clops_device_info infos[64];
        size_t n = 0;
        const char *name = clops_device_list(infos, 64, &n) == CLOPS_SUCCESS && index < n ? infos[index].device_name
                                                                                           : "?";
        printf("device %u (%s): %zu programs: built %zu, already cached %zu, failed %zu\n", index, name,
               report.total, report.built, report.cached, report.failed);
        const size_t shown = b.nfailures < 10 ? b.nfailures : 10; /* the rest as a count: often one cause */
        for (size_t i = 0; i < shown; i++) fprintf(stderr, "clops: error: kernels build: %s\n", b.failures[i]);
        if (b.nfailures > shown)
            fprintf(stderr, "clops: error: kernels build: and %zu more programs failed\n",
                    b.nfailures - shown);
        if (report.failed) rc = EXIT_FAIL;
    }
    for (size_t i = 0; i < b.nfailures; i++) free(b.failures[i]);
    free(b.failures);
    return rc;
}

static int run_source(const cli_command *cmd, const cli_args *args)
{
    (void)cmd;
    size_t len;
    char *text = read_source(args->positional[0], &len);
    if (!text) return EXIT_FAIL;
    const int ok = fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0;
    free(text);
    return ok ? EXIT_OK : fail_line("kernels source", "writing stdout failed");
}

/* The bytes of binary file `path` (freed by the caller), through the store's
 * bounded reader (lib/store/file.c): a regular file of at most what a pack entry
 * may hold, opened without blocking, its size known before a byte is read;
 * FIFOs, devices and directories are refused at once. -1 with the error printed
 * after `where` (a path, or "LIST:LINE: BIN"). */
static int read_binary(const char *path, const char *where, unsigned char **data, size_t *size)
{
    errno = 0;
    if (clops_file_read(path, CLOPS_CACHE_MAX_PAYLOAD_BYTES, data, size) == 0) return 0;
    char why[256];
    if (errno == EINVAL)
        snprintf(why, sizeof why, "not a regular file (a FIFO, device or directory): refused, nothing read");
    else if (errno == EFBIG)
        snprintf(why, sizeof why, "larger than the %llu bytes a pack entry may hold: refused, nothing read",
                 (unsigned long long)CLOPS_CACHE_MAX_PAYLOAD_BYTES);
    else
        snprintf(why, sizeof why, "cannot read the binary: %s", strerror(errno ? errno : EIO));
    fail_line(where, why);
    return -1;
}

/* The --list file's lines "SOURCE<TAB>OPTIONS<TAB>BIN" (# comments and blank
 * lines skipped) as binaries, each read whole, and each one's line number;
 * `text` is cut into the names. -1 with the error printed, naming the line. */
static int read_list(const char *list, char *text, size_t len, clops_pack_binary **out, size_t **lines,
                     size_t *count)
{
    clops_pack_binary *items = NULL;
    size_t n = 0, line = 0;
    int rc = 0;
    for (char *s = text, *end = text + len; rc == 0 && s < end; s++) {
        char *nl = memchr(s, '\n', (size_t)(end - s)), *eol = nl ? nl : end;
        line++;
        *eol = '\0';
        const char *why = NULL;
        char *tab1 = strchr(s, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (s == eol || s[0] == '#') {
            s = eol;
            continue;
        }
        if (strlen(s) != (size_t)(eol - s)) why = "a NUL byte";
        else if (!tab2 || strchr(tab2 + 1, '\t')) why = "not SOURCE<TAB>OPTIONS<TAB>BINARY-PATH (two tabs)";
        else if (tab1 == s || tab2[1] == '\0') why = "an empty SOURCE or BINARY-PATH";
        char where[4200];
        snprintf(where, sizeof where, "%s:%zu", list, line);
        clops_pack_binary *grown = why ? NULL : realloc(items, (n + 1) * sizeof *grown);
        if (grown) items = grown;
        size_t *grown_lines = grown ? realloc(*lines, (n + 1) * sizeof *grown_lines) : NULL;
        if (!grown_lines) {
            fail_line(where, why ? why : "out of memory");
            rc = -1;
            break;
        }
        *lines = grown_lines;
        (*lines)[n] = line;
        *tab1 = *tab2 = '\0';
        clops_pack_binary *b = &items[n];
        *b = (clops_pack_binary){s, tab1 + 1, NULL, 0};
        snprintf(where + strlen(where), sizeof where - strlen(where), ": %s", tab2 + 1);
        unsigned char *data;
        if (read_binary(tab2 + 1, where, &data, &b->binary_size) != 0) rc = -1;
        else b->binary = data, n++;
        s = eol;
    }
    *out = items;
    *count = n;
    return rc;
}

/* The binaries to add: --list's, or the one of --source, --options and
 * --binary; -1 with the error printed (a usage error: EXIT_USAGE in `*exit`). */
static int pack_add_items(const cli_command *cmd, const cli_args *args, char **text, clops_pack_binary **items,
                          size_t **lines, size_t *n, int *exit_code)
{
    const char *const one[3] = {args->source, args->build_options, args->binary};
    const char *const names[3] = {"--source FILE", "--options OPTIONS", "--binary BIN"};
    char err[160];
    *exit_code = EXIT_USAGE;
    for (int i = 0; i < 3; i++) {
        if (args->list && one[i])
            set_err(err, sizeof err, "--list FILE takes the place of --source, --options and --binary: "
                    "give %s or --list, not both", names[i]);
        else if (!args->list && !one[i])
            set_err(err, sizeof err, "missing required option %s (or --list FILE)", names[i]);
        else
            continue;
        usage_error(cmd, err);
        return -1;
    }
    *exit_code = EXIT_FAIL;
    unsigned char *bytes;
    size_t len;
    if (!args->list) {
        if (read_binary(args->binary, args->binary, &bytes, &len) != 0) return -1;
        *items = malloc(sizeof **items);
        if (!*items) return free(bytes), fail_line("kernels pack-add", "out of memory"), -1;
        **items = (clops_pack_binary){args->source, args->build_options, bytes, len};
        *n = 1;
        return 0;
    }
    errno = 0; /* the list: a regular file, within the bound of one binary */
    if (clops_file_read(args->list, CLOPS_CACHE_MAX_PAYLOAD_BYTES, &bytes, &len) != 0)
        return fail_line(args->list, errno == EINVAL ? "not a regular file" : strerror(errno ? errno : EIO)), -1;
    *text = malloc(len + 1); /* the lines as strings, the last one's end included */
    if (*text) memcpy(*text, bytes, len), (*text)[len] = '\0';
    free(bytes);
    if (!*text) return fail_line(args->list, "out of memory"), -1;
    if (read_list(args->list, *text, len, items, lines, n) != 0) return -1;
    if (*n == 0) /* only comments and blank lines: nothing to add, and the pack is left as it was */
        return fail_line(args->list, "names no binary (only comments and blank lines): nothing added"), -1;
    return 0;
}

/* A failure of clops_pack_add_binaries for --list: the item its message names
 * ("binaries[K] (...)", or "the binary (...)" of a list of one: a source or
 * options that are no program, a binary refused) is printed after its line,
 * "LIST:LINE: ...". */
static int fail_pack_add(const cli_args *args, const size_t *lines, size_t n, clops_status st)
{
    const char *msg = clops_last_error_message();
    size_t k = n;
    if (args->list && n == 1 && strncmp(msg, "the binary (", 12) == 0) {
        k = 0;
    } else if (args->list && strncmp(msg, "binaries[", 9) == 0) {
        char *end;
        const unsigned long i = strtoul(msg + 9, &end, 10);
        if (*end == ']' && i < n) k = (size_t)i;
    }
    if (k == n) return fail_clops("kernels pack-add", st);
    char where[4200];
    snprintf(where, sizeof where, "%s:%zu", args->list, lines[k]);
    return fail_clops(where, st);
}

static int run_pack_add(const cli_command *cmd, const cli_args *args)
{
    char *text = NULL;
    clops_pack_binary *items = NULL;
    size_t *lines = NULL;
    size_t n = 0, count = 0;
    int rc;
    if (pack_add_items(cmd, args, &text, &items, &lines, &n, &rc) == 0) {
        const clops_status st = clops_pack_add_binaries(args->positional[0], args->device_index, items, n, &count);
        rc = st != CLOPS_SUCCESS ? fail_pack_add(args, lines, n, st) : EXIT_OK;
    }
    for (size_t i = 0; i < n; i++) free((void *)items[i].binary);
    free(items);
    free(lines);
    free(text);
    if (rc == EXIT_OK) printf("%s: %zu entr%s\n", args->positional[0], count, count == 1 ? "y" : "ies");
    return rc;
}

/* The selection of programs `kernels list` and `kernels build` take (clops_program_selection);
 * VERB: what --windows does with the extra windows. */
#define SELECTION_OPTIONS(VERB)                                                                                  \
    {"--device", "N", 0, opt_cl_device, "device N of 'clops devices' (default: the default device)", 0},        \
    {"--ops", "LIST", 0, opt_ops, "depth-to-space (d2s), space-to-depth (s2d), max-unpooling (unpool) or all "  \
     "(default all), comma-separated", 0},                                                                       \
    {"--types", "LIST", 0, opt_types, "data type names (FLOAT32,UINT8,...) or all (default all)", 0},          \
    {"--blocks", "LIST", 0, opt_blocks, "block sizes (default 1,2,3,4,5,6,7,8)", 0},                           \
    {"--layouts", "LIST", 0, opt_layouts, "packed, nhwc, strided or all (default all)", 0},                    \
    {"--windows", "LIST", 0, opt_windows, "MaxUnpooling window sizes KHxKW, each 1 to 64, " VERB " besides "    \
     "every pool cell and window up to 4x4 (default none)", 0}

static const cli_option list_options[] = {
    SELECTION_OPTIONS("listed"),
    CLI_FLAG("--portable", portable, "only the portable program, which runs every operator (one binary: "
             "boards that load one image)"),
    OPT_JSON, OPT_HELP, OPT_END};

static const cli_option build_options[] = {
    SELECTION_OPTIONS("built"),
    {"--jobs", "N", 0, opt_jobs, "building threads, each with its own context on the device (default: one per "
     "online core)", 0},
    OPT_HELP, OPT_END};

static const cli_option pack_add_options[] = {
    {"--device", "N", 1, opt_cl_device, "the device of 'clops devices' the binaries were built for (required)", 0},
    {"--source", "FILE", 0, opt_source, "the kernel file it was built from: depth_space.cl, max_unpooling.cl or "
     "portable.cl (required without --list)", 0},
    {"--options", "OPTIONS", 0, opt_build_options, "the build options, exactly as 'clops kernels list' prints them "
     "for FILE on device N (required without --list)", 0},
    {"--binary", "BIN", 0, opt_binary, "the device binary: a regular file of at most 1 GiB (required without "
     "--list)", 0},
    {"--list", "FILE", 0, opt_list, "many binaries at once, instead of --source, --options and --binary: a line "
     "SOURCE<TAB>OPTIONS<TAB>BIN per binary ('#' lines ignored)", 0},
    OPT_HELP, OPT_END};

static const cli_command kernels_commands[] = {
    {"kernels list", "", 0,
     "Lists the programs (kernel source file, the hash of its whole source, build\n"
     "options) that the operators need on a device, exactly as the library asks for\n"
     "them there, every chunk, vector and offset variant the sizes can select included\n"
     "(and the portable program for blocks past 16). With --portable, the portable\n"
     "program alone: one binary whose kernels run every operator, used where the\n"
     "specialised program is neither in the cache nor compilable.",
     list_options, NULL, run_list},
    {"kernels build", "", 0,
     "Builds the programs that 'clops kernels list' names for the same options\n"
     "into the program cache, on several threads, so that\n"
     "operators of those variants load them from disk instead of compiling on\n"
     "their first call (warming up a service). Progress on stderr: one line per\n"
     "program, or a line rewritten in place on a terminal. Then a summary on\n"
     "stdout (built, already cached, failed) and each failure with its reason on\n"
     "stderr; exit status 1 if any program failed.",
     build_options, NULL, run_build},
    {"kernels source", "FILE", 1,
     "Writes the whole source of kernel FILE (depth_space.cl, max_unpooling.cl,\n"
     "portable.cl),\n"
     "exactly as clops compiles it, to stdout.",
     help_only_options, NULL, run_source},
    {"kernels pack-add", "PACK", 1,
     "Adds BIN, a device binary of kernel FILE built with OPTIONS (a line of 'clops\n"
     "kernels list') for device N, to the kernel pack PACK (created if missing; an\n"
     "entry for the same program is replaced). --list adds every binary its FILE\n"
     "names in one rewrite of PACK (the last line for a program wins); a malformed\n"
     "line is refused with its number and nothing is written. A FILE and OPTIONS\n"
     "that are not a program clops asks for on device N (one 'clops kernels list'\n"
     "prints, with --blocks or --windows where they name one) are refused the\n"
     "same way: such an entry would never be looked up. Install the pack with\n"
     "'clops cache import PACK'.",
     pack_add_options, NULL, run_pack_add},
};
#define KERNELS_COMMAND_COUNT (sizeof kernels_commands / sizeof kernels_commands[0])

void cli_kernels_usage(FILE *out)
{
    for (size_t i = 0; i < KERNELS_COMMAND_COUNT; i++) print_command_usage(out, "  ", &kernels_commands[i]);
}

int cli_kernels_main(int argc, char **argv)
{
    argc--, argv++; /* after "kernels" */
    for (size_t i = 0; argc >= 1 && i < KERNELS_COMMAND_COUNT; i++)
        if (strcmp(argv[0], kernels_commands[i].name + 8) == 0)
            return dispatch(&kernels_commands[i], argc - 1, argv + 1);
    FILE *out = argc >= 1 && is_help(argv[0]) ? stdout : stderr;
    if (argc >= 1 && out == stderr) fprintf(stderr, "clops: unknown kernels subcommand '%s'\n", argv[0]);
    fputs("usage: clops kernels SUBCOMMAND\n\nAhead-of-time kernels for devices without a run-time compiler, and programs\nbuilt into the cache before a service's first calls.\n\n"
          "subcommands:\n", out);
    cli_kernels_usage(out);
    return out == stdout ? EXIT_OK : EXIT_USAGE;
}
