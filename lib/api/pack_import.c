/* pack_import.c - kernel packs: importing one (clops_cache_import_pack(_report)),
 * and adding offline-built binaries to one (clops_pack_add_binaries, at the end:
 * only programs clops asks for on the device, checked against
 * clops_programs_list, whose prepare.c calls aot.c - so not in aot.c).
 *
 * Importing:
 * The store (store/pack.c) reads and checks the pack's framing and installs its
 * entries; this file loads each entry on its device in a child process before
 * they are installed (the loader clops_cache_import is given).
 *
 * Why: clops cannot check a device binary; only the driver can, and a driver
 * may trust the sizes inside a binary. PoCL 3.1 does: an entry whose payload
 * was cut short (with its checksum recomputed) passes clops's framing checks,
 * and clBuildProgram then reads tens of kilobytes past the end of the buffer
 * clops passed it, with the right length. Loading it in a child process first
 * means a binary that crashes or hangs the driver harms only the child: the
 * entry is rejected and never installed, so no later run loads it.
 *
 * A child creates a context on every device, reads each new entry's key from
 * the pack and writes one byte per entry to a pipe: PACK_TO_LOAD (a device here
 * has the key's identity) or PACK_OTHER_DEVICE (none has, or the key is another
 * clops version's); no binary reaches a driver. When every entry is sorted the
 * parent runs the store's pass 2 (the room under the bound, the copy of the
 * PACK_TO_LOAD entries) and sends the child the plan (which entries to load,
 * where in the copy); the same child then loads each from the import's private
 * copy (store/pack.c), the same bytes the install reads, and writes PACK_LOADS
 * or PACK_REFUSED (the driver returned an error). One child start-up per import
 * unless one fails: if a child dies or stays silent past the time limit, the
 * entry it was on is PACK_CRASHED or PACK_HUNG and a new child goes on with the
 * rest - until CLOPS_PACK_MAX_LOAD_FAILURES entries have crashed or hung: the
 * entries left are then PACK_NOT_TRIED, so a pack of hostile binaries costs at
 * most that many children or time limits, not one per entry. A child ends with
 * _exit, never running the parent's exit handlers.
 *
 * The children work with the caller's resolved options: the device list and
 * its contexts take their CLOPS_DISABLE mask from them, and with explicit
 * options nothing is read from the environment (the time limit is then the
 * default; CLOPS_IMPORT_LOAD_TIMEOUT applies to the forms that read the
 * environment). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "cl/cl.h"
#include "store/cache.h"
#include "store/file.h"
#include "store/pack.h"

/* What the loader works with: the caller's options, resolved, and the time an
 * entry may take to load. */
typedef struct import_options {
    clops_context_options o;
    int limit_ms;
} import_options;

/* The device of `key` among `ctx[0..n)` and the key's build options, or -1. */
static int device_of(clops_context *const ctx[], size_t n, const unsigned char *key, size_t key_len, char *options,
                     size_t options_size)
{
    for (size_t d = 0; d < n; d++) {
        if (!ctx[d]) continue;
        char prefix[64];
        const int pn = snprintf(prefix, sizeof prefix, "clops-cache-format %u\nclops %s\n", CLOPS_CACHE_FORMAT_VERSION,
                                CLOPS_VERSION_STRING);
        const size_t il = strlen(ctx[d]->identity);
        static const char opt[] = "\noptions: ";
        if (key_len < (size_t)pn + il + sizeof opt - 1 || memcmp(key, prefix, (size_t)pn) != 0 ||
            memcmp(key + pn, ctx[d]->identity, il) != 0 || memcmp(key + pn + il, opt, sizeof opt - 1) != 0)
            continue;
        const unsigned char *o = key + pn + il + sizeof opt - 1, *end = key + key_len;
        const unsigned char *nl = memchr(o, '\n', (size_t)(end - o));
        if (!nl || (size_t)(nl - o) >= options_size) return -1;
        memcpy(options, o, (size_t)(nl - o));
        options[nl - o] = '\0';
        return (int)d;
    }
    return -1;
}

/* What the child says about `item` of `fd`: with `load`, whether its binary loads;
 * without, whether a device here has its key's identity. */
static char verdict_of(clops_context *const ctx[], size_t n, int fd, const pack_item *item, int load, char *options,
                       size_t options_size)
{
    unsigned char *data = malloc(item->len ? (size_t)item->len : 1);
    char v = load ? PACK_REFUSED : PACK_OTHER_DEVICE;
    const unsigned char *k, *p;
    size_t klen, plen;
    if (data && pread(fd, data, (size_t)item->len, (off_t)item->offset) == (ssize_t)item->len &&
        clops_cache_entry_parse(data, (size_t)item->len, &k, &klen, &p, &plen)) {
        const int d = device_of(ctx, n, k, klen, options, options_size);
        cl_program program;
        if (d < 0) v = PACK_OTHER_DEVICE;
        else if (!load) v = PACK_TO_LOAD;
        else if (clops_program_from_binary(ctx[d], options, p, plen, &program) == CLOPS_SUCCESS) {
            clReleaseProgram(program);
            v = PACK_LOADS;
        }
    }
    free(data);
    return v;
}

/* The plan the parent sends a sorting child once every item is sorted: per item
 * the child sorted PACK_TO_LOAD (in index order), its verdict after pass 2
 * (PACK_TO_LOAD: copied, or PACK_OVER_LIMIT) and its offset in the copy. */
#define PLAN_BYTES 9

/* Reads exactly `n` bytes from the socket `fd`: 0, or -1 (the parent gave up). */
static int read_all_from(int fd, unsigned char *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        const ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The child: with `plan` >= 0 it sorts the PACK_UNCHECKED items by their keys
 * (the pack, `pack_fd`), then, if any is to load, reads the plan; then it loads
 * every PACK_TO_LOAD item from the copy (`copy_fd`). One verdict byte per item to
 * `out`, in index order. `items` is the child's own copy of the parent's. */
static _Noreturn void child_main(const import_options *io, int pack_fd, int copy_fd, pack_item *items, size_t count,
                                 int plan, int out)
{
    size_t n = 0;
    clops_context **ctx = NULL;
    clops_driver_adopt(); /* builds and loads only, runs no command: allowed after fork (cl/wait.c) */
    /* Contexts as the caller's options make them (their disable mask is part of
     * the identity an entry's key names), without the cache or the tuner. */
    clops_context_options o = io->o;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    o.tuning = 0;
    if (clops_device_list_masked(NULL, 0, &n, o.disable) == CLOPS_SUCCESS && n > 0 && n <= INT32_MAX &&
        (ctx = calloc(n, sizeof *ctx)) != NULL)
        for (size_t d = 0; d < n; d++) {
            o.device = (int)d;
            if (clops_context_create_with_options(&o, &ctx[d]) != CLOPS_SUCCESS) ctx[d] = NULL;
        }
    if (!ctx) n = 0;
    char *options = malloc(CLOPS_OPTIONS_MAX);
    if (plan >= 0) {
        bool to_load = false;
        for (size_t i = 0; i < count; i++) {
            if (items[i].verdict == PACK_UNCHECKED) {
                const char v = options ? verdict_of(ctx, n, pack_fd, &items[i], 0, options, CLOPS_OPTIONS_MAX)
                                       : PACK_OTHER_DEVICE;
                if (write(out, &v, 1) != 1) _exit(2);
                items[i].verdict = v;
            }
            to_load |= items[i].verdict == PACK_TO_LOAD;
        }
        for (size_t i = 0; to_load && i < count; i++) {
            unsigned char p[PLAN_BYTES];
            if (items[i].verdict != PACK_TO_LOAD) continue;
            if (read_all_from(plan, p, sizeof p) != 0) _exit(0); /* the parent stopped the import */
            items[i].verdict = (char)p[0];
            items[i].offset = clops_get_u64(p + 1);
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (items[i].verdict != PACK_TO_LOAD) continue;
        const char v = options ? verdict_of(ctx, n, copy_fd, &items[i], 1, options, CLOPS_OPTIONS_MAX) : PACK_REFUSED;
        if (write(out, &v, 1) != 1) _exit(2);
    }
    _exit(0); /* the contexts go with the process */
}

/* Sends the plan (PLAN_BYTES per item of `sorted`, the indices that were
 * PACK_TO_LOAD before pass 2) without SIGPIPE: 0, or -1 if the child is gone. */
static int send_plan(int sock, const pack_item *items, const size_t *sorted, size_t n)
{
    unsigned char buf[PLAN_BYTES * 512];
    for (size_t i = 0; i < n;) {
        size_t len = 0;
        for (; i < n && len < sizeof buf; i++, len += PLAN_BYTES) {
            buf[len] = (unsigned char)items[sorted[i]].verdict;
            clops_put_u64(buf + len + 1, items[sorted[i]].offset);
        }
        for (size_t sent = 0; sent < len;) {
            const ssize_t k = send(sock, buf + sent, len - sent, MSG_NOSIGNAL);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return -1;
            sent += (size_t)k;
        }
    }
    return 0;
}

/* Where the import's children are. */
typedef struct loading {
    const import_options *io;
    int pack_fd, copy_fd;
    pack_item *items;
    size_t count;
    clops_pack_prepare prepare;
    void *ctx;
    bool prepared;   /* every item sorted and pass 2 done */
    unsigned failures; /* entries that crashed or hung a child */
} loading;

/* Waits up to the limit for the child's verdict on `*it`. 1 with it, 0 if the
 * child died (PACK_CRASHED; a byte that is not a verdict of this phase counts
 * as that too) or hangs (PACK_HUNG: the entry gets that verdict). */
static int verdict_from(const loading *l, int pipe_fd, pack_item *it)
{
    while (true) {
        struct pollfd pfd = {pipe_fd, POLLIN, 0};
        const int ready = poll(&pfd, 1, l->io->limit_ms);
        if (ready < 0 && errno == EINTR) continue;
        char v = 0;
        if (ready > 0 && read(pipe_fd, &v, 1) == 1 &&
            (l->prepared ? v == PACK_LOADS || v == PACK_REFUSED : v == PACK_TO_LOAD || v == PACK_OTHER_DEVICE)) {
            it->verdict = v;
            return 1;
        }
        it->verdict = ready == 0 ? PACK_HUNG : PACK_CRASHED;
        return 0;
    }
}

/* Runs one child: sorting (until every item is sorted: then pass 2 and the
 * plan) and loading, until it ends or fails on an entry. 0, -1 if no child
 * starts, -2 if pass 2 failed. */
static int run_child(loading *l)
{
    int pipefd[2], plan[2] = {-1, -1};
    if (pipe(pipefd) != 0) return -1;
    if (!l->prepared && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, plan) != 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice */
    const pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        if (plan[0] >= 0) close(plan[0]);
        const int null = open("/dev/null", O_WRONLY | O_CLOEXEC); /* a crashing driver's last words: the report says it */
        if (null >= 0) dup2(null, STDERR_FILENO);
        child_main(l->io, l->pack_fd, l->copy_fd, l->items, l->count, plan[1], pipefd[1]);
    }
    close(pipefd[1]);
    if (plan[1] >= 0) close(plan[1]);
    int rc = pid < 0 ? -1 : 0;
    bool failed = false;
    for (size_t i = 0; !l->prepared && pid > 0 && i < l->count && !failed; i++)
        if (l->items[i].verdict == PACK_UNCHECKED) failed = !verdict_from(l, pipefd[0], &l->items[i]);
    if (pid > 0 && !l->prepared && !failed) { /* all sorted: pass 2, then the plan to the child */
        size_t n = 0, *sorted = malloc((l->count ? l->count : 1) * sizeof *sorted);
        for (size_t i = 0; sorted && i < l->count; i++)
            if (l->items[i].verdict == PACK_TO_LOAD) sorted[n++] = i;
        if (!sorted) rc = -1;
        else if (l->prepare(l->ctx, l->items, l->count) != 0) rc = -2;
        else l->prepared = true;
        if (rc == 0 && n > 0) send_plan(plan[0], l->items, sorted, n); /* a child gone shows below */
        free(sorted);
    }
    for (size_t i = 0; rc == 0 && l->prepared && i < l->count && !failed; i++)
        if (l->items[i].verdict == PACK_TO_LOAD) failed = !verdict_from(l, pipefd[0], &l->items[i]);
    l->failures += failed;
    if (pid > 0 && (failed || rc != 0)) kill(pid, SIGKILL);
    close(pipefd[0]);
    if (plan[0] >= 0) close(plan[0]);
    int status;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return rc;
}

/* The loader clops_cache_import calls (store/pack.h): children sort, then load,
 * within the import's budget of entries that crash or hang one. */
static int check_loads(const void *opts, int pack_fd, int copy_fd, pack_item *items, size_t count,
                       clops_pack_prepare prepare, void *ctx)
{
    loading l = {opts, pack_fd, copy_fd, items, count, prepare, ctx, false, 0};
    while (true) {
        const char want = l.prepared ? PACK_TO_LOAD : PACK_UNCHECKED;
        bool left = false;
        for (size_t i = 0; i < count && !left; i++) left = items[i].verdict == want;
        if (!left && l.prepared) return 0;
        if (!left) { /* sorted by earlier children: pass 2 without a child */
            if (prepare(ctx, items, count) != 0) return -2;
            l.prepared = true;
            continue;
        }
        if (l.failures >= CLOPS_PACK_MAX_LOAD_FAILURES) { /* the budget is spent: the rest are not tried */
            for (size_t i = 0; i < count; i++)
                if (items[i].verdict == PACK_UNCHECKED || items[i].verdict == PACK_TO_LOAD)
                    items[i].verdict = PACK_NOT_TRIED;
            return 0;
        }
        const int rc = run_child(&l);
        if (rc != 0) return rc;
    }
}

/* ---- public calls ------------------------------------------------------------------------- */

clops_status clops_cache_import_pack_report_with_options(const clops_context_options *opts, const char *path,
                                                        clops_pack_report *report)
{
    clops_pack_report local;
    if (!report) report = &local;
    memset(report, 0, sizeof *report);
    clops_cache_config cfg;
    if (!path) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_import_pack: path is NULL");
    clops_status st = clops_cache_usable(&cfg, opts, true);
    import_options io;
    int seconds = 0;
    if (st == CLOPS_SUCCESS) st = clops_options_resolve(opts, &io.o);
    if (st == CLOPS_SUCCESS) st = clops_options_import_timeout(opts == NULL, &seconds);
    if (st != CLOPS_SUCCESS) return st;
    io.limit_ms = seconds * 1000;
    char why[CLOPS_FILE_PATH_MAX + 512];
    if (clops_cache_import(&cfg, path, check_loads, &io, report, &st, why, sizeof why) < 0)
        return clops_fail(st, "cannot import %s: %s", path, why);
    return CLOPS_SUCCESS;
}

clops_status clops_cache_import_pack_report(const char *path, clops_pack_report *report)
{
    return clops_cache_import_pack_report_with_options(NULL, path, report);
}

clops_status clops_cache_import_pack(const char *path, size_t *count)
{
    clops_pack_report r;
    const clops_status st = clops_cache_import_pack_report(path, &r);
    if (st == CLOPS_SUCCESS && count) *count = r.imported;
    return st;
}

/* ---- adding binaries to a pack ------------------------------------------------------------ */

/* "binaries[i] (SOURCE OPTIONS)" of a batch, or "the binary (SOURCE OPTIONS)" alone, for messages. */
static const char *item_name(char *buf, size_t size, const clops_pack_binary *b, size_t i, size_t n)
{
    char index[32] = "the binary";
    if (n > 1) snprintf(index, sizeof index, "binaries[%zu]", i);
    snprintf(buf, size, "%s (%.64s %.400s)", index, b->source_name, b->build_options);
    return buf;
}

/* Checks every item of a batch, before anything is read or opened. */
static clops_status check_binaries(const clops_pack_binary *binaries, size_t n)
{
    if (n == 0 || n > CLOPS_PACK_MAX_ENTRIES)
        return clops_fail(CLOPS_ERROR_BAD_PACK, "%zu binaries cannot be added to a pack at once (1 to %u)", n,
                          CLOPS_PACK_MAX_ENTRIES);
    for (size_t i = 0; i < n; i++) {
        const clops_pack_binary *b = &binaries[i];
        if (!b->source_name || !b->build_options || !b->binary)
            return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "binaries[%zu]: its %s is NULL", i,
                              !b->source_name ? "source_name" : !b->build_options ? "build_options" : "binary");
        char name[512];
        if (b->binary_size == 0 || b->binary_size > CLOPS_CACHE_MAX_PAYLOAD_BYTES)
            return clops_fail(CLOPS_ERROR_BAD_PACK, "%s: a binary of %zu bytes cannot go in a pack (1 to %llu)",
                              item_name(name, sizeof name, b, i, n), b->binary_size,
                              (unsigned long long)CLOPS_CACHE_MAX_PAYLOAD_BYTES);
    }
    return CLOPS_SUCCESS;
}

/* The kernel sources a batch names, each read once. */
typedef struct batch_sources {
    const char **names;
    char **texts;
    size_t count;
} batch_sources;

/* `*out`: the source of item `i`, read into `s` if new. */
static clops_status source_of(batch_sources *s, const clops_pack_binary *binaries, size_t i, size_t n,
                              const char **out)
{
    const char *name = binaries[i].source_name;
    for (size_t k = 0; k < s->count; k++)
        if (strcmp(s->names[k], name) == 0) return *out = s->texts[k], CLOPS_SUCCESS;
    char *text;
    size_t len;
    const clops_status st = clops_program_source(name, &text, &len);
    if (st != CLOPS_SUCCESS) {
        char why[1024], item[512];
        snprintf(why, sizeof why, "%s", clops_last_error_message());
        return clops_fail(st, "%s: %s", item_name(item, sizeof item, &binaries[i], i, n), why);
    }
    const char **names = realloc(s->names, (s->count + 1) * sizeof *names);
    if (names) s->names = names;
    char **texts = names ? realloc(s->texts, (s->count + 1) * sizeof *texts) : NULL;
    if (!texts) {
        free(text);
        return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
    }
    s->texts = texts;
    s->names[s->count] = name;
    s->texts[s->count++] = text;
    return *out = text, CLOPS_SUCCESS;
}

/* ---- only programs clops asks for (findings 2026-12-07, R7) ---------------------------------
 * A binary is added under the key of its source and build options; an entry
 * whose options name no program clops builds on the device is never looked
 * up, so after `clops cache import` the operator compiles at run time, or on a
 * device without a compiler runs on the host - silently. Such a binary is
 * refused. The portable program has one set of options; every other program
 * must be one that clops_programs_list names on the device (what `clops
 * kernels list` prints), listed for the operators, element sizes, block sizes
 * and windows the batch's options name: every program has its element size,
 * block size (DepthToSpace/SpaceToDepth) and window (MaxUnpooling) in its
 * options, so that narrower listing names every program a whole one would
 * that could match, in a fraction of its time (on PoCL's CPU device a whole
 * `kernels pack-add` of one binary took 0.04 s, of 4,551 listed programs 1.8 s). */

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define WINDOW_MAX 64 /* clops_program_selection's windows: each side 1 to 64 */

/* The data types a selection may name (prepare.c's all_types): those of the element sizes named are listed. */
static const clops_data_type every_type[] = {
    CLOPS_DATA_TYPE_FLOAT64, CLOPS_DATA_TYPE_FLOAT32, CLOPS_DATA_TYPE_FLOAT16,   CLOPS_DATA_TYPE_INT64,
    CLOPS_DATA_TYPE_INT32,   CLOPS_DATA_TYPE_INT16,   CLOPS_DATA_TYPE_INT8,      CLOPS_DATA_TYPE_UINT64,
    CLOPS_DATA_TYPE_UINT32,  CLOPS_DATA_TYPE_UINT16,  CLOPS_DATA_TYPE_UINT8,     CLOPS_DATA_TYPE_BOOL,
    CLOPS_DATA_TYPE_BFLOAT16, CLOPS_DATA_TYPE_COMPLEX64, CLOPS_DATA_TYPE_COMPLEX128};

/* The programs of a listing, as "SOURCE\nOPTIONS" keys (sorted once listed). */
typedef struct program_set {
    char **keys;
    size_t count, capacity;
    bool failed;
} program_set;

static char *program_key(const char *source, const char *options)
{
    const size_t len = strlen(source) + 1 + strlen(options) + 1;
    char *key = malloc(len);
    if (key) snprintf(key, len, "%s\n%s", source, options);
    return key;
}

static void collect_program(void *user, const char *source, const char *options)
{
    program_set *set = user;
    if (set->failed) return;
    if (set->count == set->capacity) {
        const size_t cap = set->capacity ? 2 * set->capacity : 256;
        char **grown = realloc(set->keys, cap * sizeof *grown);
        if (!grown) {
            set->failed = true;
            return;
        }
        set->keys = grown, set->capacity = cap;
    }
    if (!(set->keys[set->count] = program_key(source, options))) set->failed = true;
    else set->count++;
}

static int key_order(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The number after "-DNAME=" in `options` (a 'u' suffix allowed), 0 when there is
 * none: only what to list; whether the options are a program is the listing's answer. */
static unsigned long define_value(const char *options, const char *name)
{
    const size_t len = strlen(name);
    for (const char *s = options; (s = strstr(s, "-D")) != NULL; s += 2) {
        if ((s != options && s[-1] != ' ') || strncmp(s + 2, name, len) != 0 || s[2 + len] != '=') continue;
        const char *v = s + 3 + len;
        if (*v < '0' || *v > '9') return 0;
        errno = 0;
        const unsigned long x = strtoul(v, NULL, 10);
        return errno ? 0 : x;
    }
    return 0;
}

/* Every binary of the batch is a program clops asks for on ctx's device, or
 * the first that is not is refused, naming it. */
static clops_status check_programs(clops_context *ctx, unsigned device_index, const clops_pack_binary *binaries,
                                   size_t n)
{
    bool size_named[17] = {false}, block_named[CLOPS_SPECIALISED_BLOCK_MAX + 1] = {false};
    bool(*window_named)[WINDOW_MAX + 1] = calloc(WINDOW_MAX + 1, sizeof *window_named);
    if (!window_named) return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
    clops_program_selection sel;
    memset(&sel, 0, sizeof sel);
    size_t nwindows = 0;
    for (size_t i = 0; i < n; i++) {
        const char *src = binaries[i].source_name, *opt = binaries[i].build_options;
        const unsigned long bytes = define_value(opt, "ELEM_BYTES");
        if (bytes <= 16) size_named[bytes] = true;
        if (strcmp(src, "depth_space.cl") == 0) {
            const unsigned long b = define_value(opt, "BLOCK");
            if (b >= 1 && b <= CLOPS_SPECIALISED_BLOCK_MAX) {
                block_named[b] = true;
                sel.ops |= CLOPS_SELECT_DEPTH_TO_SPACE | CLOPS_SELECT_SPACE_TO_DEPTH;
            }
        } else if (strcmp(src, "max_unpooling.cl") == 0) {
            sel.ops |= CLOPS_SELECT_MAX_UNPOOLING;
            const unsigned long kh = define_value(opt, "KH"), kw = define_value(opt, "KW");
            /* windows up to 4x4 and every pool cell are listed without asking */
            if (kh >= 1 && kh <= WINDOW_MAX && kw >= 1 && kw <= WINDOW_MAX && (kh > 4 || kw > 4) &&
                !window_named[kh][kw])
                window_named[kh][kw] = true, nwindows++;
        }
    }
    clops_data_type types[COUNT(every_type)];
    uint32_t blocks[CLOPS_SPECIALISED_BLOCK_MAX];
    uint32_t *windows = malloc((2 * nwindows + 1) * sizeof *windows);
    for (size_t t = 0; t < COUNT(every_type); t++)
        if (size_named[clops_data_type_size(every_type[t])]) types[sel.type_count++] = every_type[t];
    for (uint32_t b = 1; b <= CLOPS_SPECIALISED_BLOCK_MAX; b++)
        if (block_named[b]) blocks[sel.block_count++] = b;
    for (uint32_t kh = 1; windows && kh <= WINDOW_MAX; kh++)
        for (uint32_t kw = 1; kw <= WINDOW_MAX; kw++)
            if (window_named[kh][kw]) windows[2 * sel.window_count] = kh, windows[2 * sel.window_count++ + 1] = kw;
    free(window_named);
    sel.types = types, sel.blocks = blocks, sel.windows = windows;
    program_set set = {NULL, 0, 0, !windows};
    clops_status st = CLOPS_SUCCESS;
    if (!set.failed && sel.ops && sel.type_count) /* else no binary can be a listed program */
        st = clops_programs_list(ctx, &sel, collect_program, &set);
    free(windows);
    if (st == CLOPS_SUCCESS && set.failed)
        st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
    if (st == CLOPS_SUCCESS && set.count) qsort(set.keys, set.count, sizeof *set.keys, key_order);
    for (size_t i = 0; st == CLOPS_SUCCESS && i < n; i++) {
        const clops_pack_binary *b = &binaries[i];
        char item[512];
        if (strcmp(b->source_name, CLOPS_PORTABLE_SOURCE) == 0) {
            if (strcmp(b->build_options, CLOPS_PORTABLE_OPTIONS) != 0)
                st = clops_fail(CLOPS_ERROR_INVALID_SETTING, "%s: not a program clops asks for: the portable "
                                "program is built with \"%s\" alone ('clops kernels list --portable'), so an entry "
                                "with these options would never be looked up; nothing was added",
                                item_name(item, sizeof item, b, i, n), CLOPS_PORTABLE_OPTIONS);
            continue;
        }
        char *key = program_key(b->source_name, b->build_options);
        if (!key) {
            st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
            break;
        }
        if (!set.count || !bsearch(&key, set.keys, set.count, sizeof *set.keys, key_order))
            st = clops_fail(CLOPS_ERROR_INVALID_SETTING, "%s: not a program clops asks for on device %u (%s): "
                            "'clops kernels list --device %u' (with --blocks or --windows for the block size or "
                            "window these options name) lists no %s program with these build options, so its entry "
                            "would never be looked up (an operator would compile the program instead, or run on the "
                            "host where the device has no compiler); nothing was added",
                            item_name(item, sizeof item, b, i, n), device_index, clops_context_device_name(ctx),
                            device_index, b->source_name);
        free(key);
    }
    for (size_t k = 0; k < set.count; k++) free(set.keys[k]);
    free(set.keys);
    return st;
}

clops_status clops_pack_add_binaries(const char *pack_path, unsigned device_index, const clops_pack_binary *binaries,
                                     size_t n, size_t *count)
{
    if (count) *count = 0;
    if (!pack_path || !binaries) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_pack_add_binaries: NULL argument");
    clops_status st = check_binaries(binaries, n);
    if (st != CLOPS_SUCCESS) return st;
    batch_sources sources = {NULL, NULL, 0};
    const char **texts = calloc(n, sizeof *texts);
    clops_pack_new *entries = calloc(n, sizeof *entries);
    if (!texts || !entries) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "clops_pack_add_binaries: out of memory");
    for (size_t i = 0; st == CLOPS_SUCCESS && i < n; i++) st = source_of(&sources, binaries, i, n, &texts[i]);
    clops_context *ctx = NULL;
    if (st == CLOPS_SUCCESS) /* one context: the device's identity is part of each key */
        st = clops_context_create_device(device_index, &ctx);
    if (st == CLOPS_SUCCESS) st = check_programs(ctx, device_index, binaries, n); /* before the pack is touched */
    for (size_t i = 0; st == CLOPS_SUCCESS && i < n; i++) {
        entries[i].key = clops_program_cache_key(ctx, binaries[i].build_options, texts[i], &entries[i].key_len);
        entries[i].payload = binaries[i].binary;
        entries[i].payload_len = binaries[i].binary_size;
        if (!entries[i].key)
            st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "cache key for %s", binaries[i].source_name);
    }
    if (st == CLOPS_SUCCESS) {
        char why[CLOPS_FILE_PATH_MAX + 256];
        clops_status why_st;
        const int added = clops_pack_add(pack_path, entries, n, &why_st, why, sizeof why);
        if (added < 0)
            st = clops_fail(why_st, "cannot add %s to the pack %s: %s", n == 1 ? "the binary" : "the binaries",
                            pack_path, why);
        else if (count)
            *count = (size_t)added;
    }
    for (size_t i = 0; entries && i < n; i++) free((char *)entries[i].key);
    for (size_t k = 0; k < sources.count; k++) free(sources.texts[k]);
    free(sources.names);
    free(sources.texts);
    free(entries);
    free(texts);
    clops_context_free(ctx);
    return st;
}

clops_status clops_pack_add_binary(const char *pack_path, unsigned device_index, const char *source_name,
                                   const char *build_options, const void *binary, size_t binary_size, size_t *count)
{
    if (count) *count = 0;
    if (!pack_path || !source_name || !build_options || !binary)
        return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_pack_add_binary: NULL argument");
    const clops_pack_binary one = {source_name, build_options, binary, binary_size};
    return clops_pack_add_binaries(pack_path, device_index, &one, 1, count);
}
