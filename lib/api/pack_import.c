/* pack_import.c - importing a kernel pack: clops_cache_import_pack(_report).
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
