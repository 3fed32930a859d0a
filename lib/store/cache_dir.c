/* cache_dir.c - the cache directory as a whole: its entry files least recently
 * used first, listing, pruning to the size bound, clearing; and storing an
 * entry (the format is cache_entry.c's), which prunes after it.
 *
 * The cache owns its directory: besides entries ("<16 hex>.bin", whatever their
 * size or content) it sees the temporary files ".tmp-XXXXXX" of the atomic
 * writer (file.h). Every one of them counts against the size bound. A temporary
 * file older than CLOPS_CACHE_TEMP_STALE_SECONDS belongs to a writer that was
 * killed before its rename: list shows it, prune (even under the bound) and
 * clear remove it, first. A younger one may be a write in progress and is left
 * alone. A symbolic link named like an entry or a temporary is not followed: it
 * counts as a stale temporary. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* lstat, S_ISLNK */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "store/file.h"

static bool is_entry_name(const char *name)
{
    const size_t n = strlen(name);
    return n == 20 && strcmp(name + 16, ".bin") == 0 && strspn(name, "0123456789abcdef") == 16;
}

static bool is_temp_name(const char *name)
{
    return strlen(name) == 11 && strncmp(name, ".tmp-", 5) == 0;
}

int clops_cache_scan(const clops_cache_config *cfg, clops_cache_file **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(cfg->dir);
    if (!d) return -1;
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        const bool entry = is_entry_name(e->d_name);
        if (!entry && !is_temp_name(e->d_name)) continue;
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%.20s", cfg->dir, e->d_name); /* names are 20 chars */
        struct stat st;
        if (lstat(path, &st) != 0) continue; /* removed meanwhile */
        /* A symbolic link named like one of ours is never followed (N3): it is no
         * entry, and prune and clear remove it (the link) like a stale temporary. */
        const bool link = S_ISLNK(st.st_mode);
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            clops_cache_file *grown = realloc(*out, cap * sizeof **out);
            if (!grown) {
                rc = -1;
                break;
            }
            *out = grown;
        }
        clops_cache_file *f = &(*out)[(*count)++];
        snprintf(f->name, sizeof f->name, "%.20s", e->d_name);
        f->size = (uint64_t)st.st_size;
        f->used = st.st_mtim;
        f->entry = entry && !link;
        f->stale = link || (!entry && time(NULL) - st.st_mtim.tv_sec > CLOPS_CACHE_TEMP_STALE_SECONDS);
    }
    closedir(d);
    for (size_t i = 1; i < *count; i++) /* insertion sort by mtime: caches hold few entries */
        for (size_t j = i; j > 0; j--) {
            clops_cache_file *a = &(*out)[j - 1], *b = &(*out)[j];
            if (a->used.tv_sec < b->used.tv_sec || (a->used.tv_sec == b->used.tv_sec && a->used.tv_nsec <= b->used.tv_nsec))
                break;
            clops_cache_file t = *a;
            *a = *b;
            *b = t;
        }
    return rc;
}

/* Removes every stale temporary file (whatever the bound: N14), then entries
 * least recently used first until at most `max_bytes` remain (every entry for `all`). */
static int remove_until(const clops_cache_config *cfg, uint64_t max_bytes, bool all)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE) return 0;
    clops_cache_file *files;
    size_t count;
    if (clops_cache_scan(cfg, &files, &count) != 0) {
        free(files);
        return -1;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++) total += files[i].size;
    int removed = 0;
    for (int pass = 0; pass < 2; pass++) /* stale temporary files, then entries */
        for (size_t i = 0; i < count && (pass == 0 || all || total > max_bytes); i++) {
            if (pass == 0 ? !files[i].stale : !files[i].entry) continue;
            char path[CLOPS_CACHE_PATH_MAX + 96];
            snprintf(path, sizeof path, "%s/%s", cfg->dir, files[i].name);
            if (unlink(path) == 0) removed++;
            total -= files[i].size;
        }
    free(files);
    return removed;
}

int clops_cache_prune_to(const clops_cache_config *cfg, uint64_t max_bytes)
{
    return remove_until(cfg, max_bytes, false);
}

int clops_cache_list(const clops_cache_config *cfg, clops_cache_visit visit, void *user)
{
    clops_cache_file *files;
    size_t count;
    if (cfg->mode == CLOPS_CACHE_OFF || clops_cache_scan(cfg, &files, &count) != 0) return -1;
    for (size_t i = 0; i < count; i++) {
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%s", cfg->dir, files[i].name);
        unsigned char *data = NULL;
        size_t size;
        const unsigned char *k = NULL, *p;
        size_t klen = 0, plen = 0;
        const bool ok = files[i].entry &&
                        clops_file_read_flags(path, CLOPS_CACHE_ENTRY_MAX_BYTES, CLOPS_FILE_IN_CACHE, &data, &size) == 0 &&
                        clops_cache_entry_parse(data, size, &k, &klen, &p, &plen);
        visit(user, files[i].name, files[i].size, (long long)files[i].used.tv_sec, ok ? (const char *)k : NULL,
              ok ? klen : 0);
        free(data);
    }
    free(files);
    return (int)count;
}

int clops_cache_clear(const clops_cache_config *cfg)
{
    const int n = remove_until(cfg, 0, true);
    if (n >= 0) clops_tuning_locks_remove(cfg);
    return n;
}

void clops_cache_store(const clops_cache_config *cfg, const char *key, size_t key_len, const unsigned char *payload,
                       size_t payload_len)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE || key_len > CLOPS_CACHE_MAX_KEY_BYTES || payload_len > CLOPS_CACHE_MAX_PAYLOAD_BYTES) return;
    unsigned char header[CLOPS_CACHE_ENTRY_HEADER_BYTES];
    clops_cache_entry_header(header, (const unsigned char *)key, key_len, payload, payload_len);
    char path[CLOPS_CACHE_PATH_MAX + 32];
    clops_cache_entry_path(cfg, key, key_len, path, sizeof path);
    const void *const parts[3] = {header, key, payload};
    const size_t sizes[3] = {CLOPS_CACHE_ENTRY_HEADER_BYTES, key_len, payload_len};
    if (clops_file_write_parts(path, CLOPS_CACHE_FILE_MODE, CLOPS_FILE_IN_CACHE, parts, sizes, 3, NULL) == 0)
        clops_cache_prune_to(cfg, cfg->max_bytes);
}

/* ---- public calls ------------------------------------------------------------------------- */

typedef struct {
    clops_cache_entry_fn fn;
    void *user;
} visit_ctx;

static void visit_adapter(void *user, const char *file, uint64_t bytes, long long mtime, const char *key,
                          size_t key_len)
{
    const visit_ctx *v = user;
    v->fn(v->user, file, bytes, mtime, key, key_len);
}

clops_status clops_cache_list_entries_with_options(const clops_context_options *opts, clops_cache_entry_fn fn,
                                                   void *user, size_t *count)
{
    clops_cache_config cfg;
    if (!fn) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_list_entries: fn is NULL");
    clops_status st = clops_cache_usable(&cfg, opts, false);
    if (st != CLOPS_SUCCESS) return st;
    visit_ctx v = {fn, user};
    const int n = clops_cache_list(&cfg, visit_adapter, &v);
    if (n < 0) return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot read the cache directory %s", cfg.dir);
    if (count) *count = (size_t)n;
    return CLOPS_SUCCESS;
}

clops_status clops_cache_list_entries(clops_cache_entry_fn fn, void *user, size_t *count)
{
    return clops_cache_list_entries_with_options(NULL, fn, user, count);
}

/* Prune to the size bound of the options (bound UINT64_MAX), or clear (bound 0). */
static clops_status prune(const clops_context_options *opts, uint64_t bound, size_t *removed)
{
    clops_cache_config cfg;
    clops_status st = clops_cache_usable(&cfg, opts, true);
    if (st != CLOPS_SUCCESS) return st;
    const int n = bound == 0 ? clops_cache_clear(&cfg) : clops_cache_prune_to(&cfg, bound == UINT64_MAX ? cfg.max_bytes : bound);
    if (n < 0) return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot read the cache directory %s", cfg.dir);
    if (removed) *removed = (size_t)n;
    return CLOPS_SUCCESS;
}

clops_status clops_cache_prune_with_options(const clops_context_options *opts, size_t *removed)
{
    return prune(opts, UINT64_MAX, removed);
}

clops_status clops_cache_prune(size_t *removed)
{
    return prune(NULL, UINT64_MAX, removed);
}

clops_status clops_cache_clear_all_with_options(const clops_context_options *opts, size_t *removed)
{
    return prune(opts, 0, removed);
}

clops_status clops_cache_clear_all(size_t *removed)
{
    return prune(NULL, 0, removed);
}
