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
 * The child creates a context on every device, then for each entry writes one
 * verdict byte to a pipe: PACK_LOADS, PACK_OTHER_DEVICE (no device here has the
 * key's identity, or the key is another clops version's) or PACK_REFUSED (the
 * driver returned an error). If the child dies or stays silent past the time
 * limit, the entry it was loading is PACK_CRASHED or PACK_HUNG and a new child
 * goes on with the next one. The child ends with _exit, never running the
 * parent's exit handlers.
 *
 * The child reads the import's private copy of the entries (store/pack.c), the
 * same bytes the install reads, and works with the caller's resolved options:
 * the device list and its contexts take their CLOPS_DISABLE mask from them, and
 * with explicit options nothing is read from the environment (the time limit
 * is then the default; CLOPS_IMPORT_LOAD_TIMEOUT applies to the forms that read
 * the environment). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static char verdict_of(clops_context *const ctx[], size_t n, int fd, const pack_item *item, char *options,
                       size_t options_size)
{
    unsigned char *data = malloc(item->len ? (size_t)item->len : 1);
    char v = PACK_REFUSED;
    const unsigned char *k, *p;
    size_t klen, plen;
    if (data && pread(fd, data, (size_t)item->len, (off_t)item->offset) == (ssize_t)item->len &&
        clops_cache_entry_parse(data, (size_t)item->len, &k, &klen, &p, &plen)) {
        const int d = device_of(ctx, n, k, klen, options, options_size);
        cl_program program;
        if (d < 0) v = PACK_OTHER_DEVICE;
        else if (clops_program_from_binary(ctx[d], options, p, plen, &program) == CLOPS_SUCCESS) {
            clReleaseProgram(program);
            v = PACK_LOADS;
        }
    }
    free(data);
    return v;
}

static _Noreturn void child_main(const import_options *io, int fd, const pack_item *items, size_t from, size_t count,
                                 int out)
{
    size_t n = 0;
    clops_context **ctx = NULL;
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
    for (size_t i = from; i < count; i++) {
        if (items[i].verdict != PACK_UNCHECKED) continue; /* the parent left it out */
        const char v = options ? verdict_of(ctx, n, fd, &items[i], options, CLOPS_OPTIONS_MAX) : PACK_REFUSED;
        if (write(out, &v, 1) != 1) _exit(2);
    }
    _exit(0); /* the contexts go with the process */
}

/* Runs one child from item `from`; fills verdicts until it ends. Returns the index
 * of the first item still unchecked (count when all are), or -1 if no child starts. */
static long run_child(const import_options *io, int fd, pack_item *items, size_t from, size_t count)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) return -1;
    fflush(NULL); /* nothing buffered is written twice */
    const pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        close(pipefd[0]);
        const int null = open("/dev/null", O_WRONLY | O_CLOEXEC); /* a crashing driver's last words: the report says it */
        if (null >= 0) dup2(null, STDERR_FILENO);
        child_main(io, fd, items, from, count, pipefd[1]);
    }
    close(pipefd[1]);
    size_t i = from;
    const int limit = io->limit_ms;
    while (true) {
        while (i < count && items[i].verdict != PACK_UNCHECKED) i++;
        if (i == count) break;
        struct pollfd pfd = {pipefd[0], POLLIN, 0};
        const int ready = poll(&pfd, 1, limit);
        if (ready < 0 && errno == EINTR) continue;
        char v;
        if (ready > 0 && read(pipefd[0], &v, 1) == 1) {
            items[i].verdict = v;
            continue;
        }
        /* The child died or hangs on item i. */
        items[i].verdict = ready == 0 ? PACK_HUNG : PACK_CRASHED;
        kill(pid, SIGKILL);
        i++;
        break;
    }
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return (long)i;
}

static int check_loads(const void *opts, int fd, pack_item *items, size_t count)
{
    const import_options *io = opts;
    size_t from = 0;
    while (true) {
        while (from < count && items[from].verdict != PACK_UNCHECKED) from++;
        if (from == count) return 0;
        const long next = run_child(io, fd, items, from, count);
        if (next < 0) return -1;
        from = (size_t)next;
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
