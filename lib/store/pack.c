/* pack.c - kernel packs: every valid entry of a cache in one file, to carry
 * built kernels to another machine or into a container image.
 *
 * Pack file: magic "CLOPSPAK" | u64 entry count | per entry: u64 length | the
 * entry file's bytes (cache_entry.c's format, checked like any entry). Export
 * writes through the atomic writer (file.h), so a failed export leaves the old
 * pack as it was. Import is a transaction: the pack is read entry by entry,
 * never whole (a 3 GiB file that is not a pack costs its first 16 bytes), and a
 * malformed byte anywhere installs nothing; duplicates are skipped; the other
 * entries are loaded on their devices by the caller's loader (api/pack_import.c) and
 * those that load are installed, each atomically, within the size bound. A
 * failed install removes what this import installed.
 *
 * Import installs exactly the bytes it checked, and copies no more than it may
 * install. Pass 1 reads each entry of the pack once, checks its framing and
 * checksum and hashes its key, writing nothing. Entries already in the cache or
 * earlier in the pack, for no device here (sorted by key in a child, no binary
 * reaching a driver) or too large for the room under the cache's bound are
 * decided then. Pass 2 copies only the entries left, each read again and
 * verified unchanged (length, checksum, key hash), to a private copy (a file in
 * the cache directory, unlinked at once); the loader and the install read that
 * copy, never the pack again, so a pack rewritten during the import changes
 * nothing. Its work is O(n log n) in the entries whatever their keys (sorted
 * name hashes find duplicates), a pack holds at most CLOPS_PACK_MAX_ENTRIES, and
 * after CLOPS_PACK_MAX_LOAD_FAILURES entries that crash or hang the loader the
 * rest are not tried.
 *
 * Adding entries (clops_pack_add: ahead-of-time binaries, any number at once)
 * checks the old pack as import does, reads it once and writes the new one
 * once, through the atomic writer: the entry limit is checked before a byte is
 * written and a failure leaves the old pack as it was. The read, merge and
 * rename happen under an exclusive lock (file.h's clops_file_lock_take, the
 * tuning database's too) on "<pack>.lock" beside the pack, removed afterwards,
 * so adders running at once on one pack wait for each other and keep each
 * other's entries (R8) instead of the last rename dropping the others'. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "store/file.h"
#include "store/pack.h"

#define PACK_MAGIC "CLOPSPAK"
#define PACK_HEADER_BYTES 16
#define PACK_MAX_BYTES (UINT64_C(1) << 40)
#define PACK_FILE_MODE 0666

/* Reads and checks the entry file `name`: true if it is a valid entry (then, with
 * `data`, its bytes, freed by the caller). */
static bool read_entry(const clops_cache_config *cfg, const char *name, unsigned char **data, size_t *size)
{
    char path[CLOPS_CACHE_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/%s", cfg->dir, name);
    unsigned char *bytes;
    size_t n, klen, plen;
    const unsigned char *k, *p;
    if (clops_file_read(path, CLOPS_CACHE_ENTRY_MAX_BYTES, &bytes, &n) != 0) return false;
    const bool ok = clops_cache_entry_parse(bytes, n, &k, &klen, &p, &plen);
    if (ok && data) {
        *data = bytes;
        *size = n;
    } else {
        free(bytes);
    }
    return ok;
}

int clops_cache_export(const clops_cache_config *cfg, const char *pack_path, size_t *removed, clops_status *st,
                       char *why, size_t why_size)
{
    clops_cache_file *files;
    size_t count;
    *removed = 0;
    *st = CLOPS_ERROR_CACHE_IO;
    snprintf(why, why_size, "cannot read the cache directory %s", cfg->dir);
    if (cfg->mode == CLOPS_CACHE_OFF || clops_cache_scan(cfg, &files, &count) != 0) return -1;
    /* The count comes first (the pack may be a pipe): the entries are checked,
     * then read again and written. */
    uint64_t valid = 0;
    for (size_t i = 0; i < count; i++) {
        files[i].entry = files[i].entry && read_entry(cfg, files[i].name, NULL, NULL);
        valid += files[i].entry;
    }
    if (valid > CLOPS_PACK_MAX_ENTRIES) { /* no pack can hold them: trying again will not help */
        *st = CLOPS_ERROR_BAD_PACK;
        snprintf(why, why_size, "the cache holds %llu entries, more than the %u a pack may hold",
                 (unsigned long long)valid, CLOPS_PACK_MAX_ENTRIES);
        free(files);
        return -1;
    }
    clops_file_writer w;
    if (clops_file_begin(&w, pack_path, PACK_FILE_MODE, CLOPS_FILE_IN_PLACE) != 0) {
        clops_file_describe(&w, why, why_size);
        free(files);
        return -1;
    }
    unsigned char head[PACK_HEADER_BYTES];
    memcpy(head, PACK_MAGIC, 8);
    clops_put_u64(head + 8, valid);
    clops_file_write(&w, head, sizeof head);
    uint64_t written = 0;
    for (size_t i = 0; !w.step && i < count; i++) {
        unsigned char *data, len[8];
        size_t size;
        if (!files[i].entry) continue;
        if (!read_entry(cfg, files[i].name, &data, &size)) {
            /* Removed (or spoilt) by another process since the count, e.g. a
             * prune: left out, and the count patched below. A pack written in
             * place (a pipe) has sent its count already. */
            if (w.in_place) {
                snprintf(why, why_size,
                         "entry %s was removed during the export, after the pack's count went to the pipe or "
                         "device, where it cannot be corrected; try again", files[i].name);
                free(files);
                clops_file_abort(&w);
                return -1;
            }
            ++*removed;
            continue;
        }
        clops_put_u64(len, size);
        if (clops_file_write(&w, len, 8) == 0 && clops_file_write(&w, data, size) == 0) written++;
        free(data);
    }
    free(files);
    /* The temporary file (a regular target): its count says what it holds. */
    if (*removed) {
        clops_put_u64(head + 8, written);
        clops_file_patch(&w, 8, head + 8, 8);
    }
    if (clops_file_commit(&w) == 0) return (int)written;
    clops_file_describe(&w, why, why_size);
    return -1;
}

/* Reads entry `it` of the pack into a new buffer and checks it; NULL if malformed. */
static unsigned char *read_item(int fd, const pack_item *it, const unsigned char **key, size_t *key_len)
{
    unsigned char *data = malloc(it->len ? (size_t)it->len : 1);
    const unsigned char *p;
    size_t plen;
    if (data && pread(fd, data, (size_t)it->len, (off_t)it->offset) == (ssize_t)it->len &&
        clops_cache_entry_parse(data, (size_t)it->len, key, key_len, &p, &plen))
        return data;
    free(data);
    return NULL;
}

int clops_pack_read_items(int fd, uint64_t size, pack_item **items, size_t *count, char *why, size_t why_size)
{
    *items = NULL;
    *count = 0;
    unsigned char head[PACK_HEADER_BYTES];
    if (size < PACK_HEADER_BYTES || clops_file_read_exact(fd, head, sizeof head) != 0 ||
        memcmp(head, PACK_MAGIC, 8) != 0) {
        snprintf(why, why_size, "it is not a clops kernel pack (no CLOPSPAK header)");
        return -1;
    }
    const uint64_t n = clops_get_u64(head + 8);
    if (n > CLOPS_PACK_MAX_ENTRIES) {
        snprintf(why, why_size, "its header announces %llu entries, more than the %u a pack may hold",
                 (unsigned long long)n, CLOPS_PACK_MAX_ENTRIES);
        return -1;
    }
    if (n > (size - PACK_HEADER_BYTES) / (8 + CLOPS_CACHE_ENTRY_HEADER_BYTES) ||
        !(*items = calloc(n ? (size_t)n : 1, sizeof **items))) {
        snprintf(why, why_size, "its header announces %llu entries, more than its %llu bytes hold",
                 (unsigned long long)n, (unsigned long long)size);
        return -1;
    }
    uint64_t pos = PACK_HEADER_BYTES;
    for (uint64_t i = 0; i < n; i++) {
        unsigned char len[8];
        pack_item *it = &(*items)[i];
        if (size - pos < 8 || pread(fd, len, 8, (off_t)pos) != 8) break;
        it->len = clops_get_u64(len);
        it->offset = pos + 8;
        const unsigned char *k;
        size_t klen;
        unsigned char *data = NULL;
        if (it->len > size - it->offset || it->len > CLOPS_CACHE_ENTRY_MAX_BYTES ||
            !(data = read_item(fd, it, &k, &klen))) {
            snprintf(why, why_size, "entry %llu (at byte %llu) is malformed or fails its checksum",
                     (unsigned long long)i + 1, (unsigned long long)pos);
            return -1;
        }
        it->hash = clops_fnv1a(CLOPS_FNV_SEED, k, klen);
        it->sum = clops_get_u64(data + 24);
        snprintf(it->name, sizeof it->name, "%016llx.bin", (unsigned long long)it->hash);
        pos = it->offset + it->len;
        free(data);
        *count = (size_t)i + 1;
    }
    if (*count != n || pos != size) {
        snprintf(why, why_size, "it ends early or has bytes after its last entry (%llu of %llu entries read)",
                 (unsigned long long)*count, (unsigned long long)n);
        return -1;
    }
    return 0;
}

#ifdef CLOPS_TEST_HOOKS
_Thread_local unsigned long long clops_pack_name_compares;
#define COUNT_COMPARE() (clops_pack_name_compares++)
#else
#define COUNT_COMPARE() ((void)0)
#endif

/* An item's name (its key's 64-bit hash: the name is that hash in hex, so equal
 * hashes are equal names) and its index, ordered by both. */
typedef struct name_ref {
    uint64_t hash;
    size_t index;
} name_ref;

static int by_name(const void *a, const void *b)
{
    COUNT_COMPARE();
    const name_ref *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Marks every item whose name an earlier item has as PACK_IN_PACK: the names
 * are sorted (O(n log n) compares whatever the keys: no hash table that crafted
 * keys could make probe quadratically), and each run of equal names keeps its
 * first item. 0, or -1 if there is no memory for the sort. */
static int mark_pack_duplicates(pack_item *items, size_t count)
{
    name_ref *refs = malloc((count ? count : 1) * sizeof *refs);
    if (!refs) return -1;
    for (size_t i = 0; i < count; i++) refs[i] = (name_ref){items[i].hash, i};
    qsort(refs, count, sizeof *refs, by_name);
    for (size_t i = 1; i < count; i++)
        if (refs[i].hash == refs[i - 1].hash) items[refs[i].index].verdict = PACK_IN_PACK;
    free(refs);
    return 0;
}

/* True if the cache already has entry `it` of the pack open as `fd` (the same key). */
static bool in_cache(const clops_cache_config *cfg, int fd, const pack_item *it)
{
    char path[CLOPS_CACHE_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", cfg->dir, it->name);
    unsigned char *old, *mine;
    size_t old_size, klen, old_klen, plen;
    const unsigned char *k, *old_k, *p;
    if (clops_file_read(path, CLOPS_CACHE_ENTRY_MAX_BYTES, &old, &old_size) != 0) return false;
    bool same = false;
    if (clops_cache_entry_parse(old, old_size, &old_k, &old_klen, &p, &plen) &&
        (mine = read_item(fd, it, &k, &klen)) != NULL) {
        same = klen == old_klen && memcmp(k, old_k, klen) == 0;
        free(mine);
    }
    free(old);
    return same;
}

/* The bytes the cache's files take now, or -1 with `why`. */
static int cache_bytes(const clops_cache_config *cfg, uint64_t *total, char *why, size_t why_size)
{
    clops_cache_file *files;
    size_t nfiles;
    if (clops_cache_scan(cfg, &files, &nfiles) != 0) {
        snprintf(why, why_size, "cannot read the cache directory %s", cfg->dir);
        return -1;
    }
    *total = 0;
    for (size_t i = 0; i < nfiles; i++) *total += files[i].size;
    free(files);
    return 0;
}

/* Decides PACK_TO_LOAD items that cannot fit: in pack order, an entry that does
 * not fit the room under the bound beside the ones before it is
 * PACK_OVER_LIMIT now, never copied. 0, or -1 with `why`. */
static int plan_room(const clops_cache_config *cfg, pack_item *items, size_t count, char *why, size_t why_size)
{
    uint64_t total;
    if (cache_bytes(cfg, &total, why, why_size) != 0) return -1;
    uint64_t room = total < cfg->max_bytes ? cfg->max_bytes - total : 0;
    for (size_t i = 0; i < count; i++) {
        if (items[i].verdict != PACK_TO_LOAD) continue;
        if (items[i].len > room) {
            items[i].verdict = PACK_OVER_LIMIT;
            continue;
        }
        room -= items[i].len;
    }
    return 0;
}

/* Pass 2 (the loader's prepare step): what an import needs between sorting and
 * loading. */
typedef struct pass2 {
    const clops_cache_config *cfg;
    int fd;          /* the pack */
    int copy_w;      /* the private copy, for writing; -1 if it could not be created */
    int copy_errno;  /* why not */
    clops_status st; /* on a failure, with why */
    char *why;
    size_t why_size;
} pass2;

/* Decides the PACK_TO_LOAD items that cannot fit (plan_room) and copies the
 * others to the private copy, each read again and verified to be what pass 1
 * checked; the items point into the copy afterwards. 0, or -1 with the
 * context's `st` and `why`. */
static int copy_items(void *context, pack_item *items, size_t count)
{
    pass2 *c = context;
    c->st = CLOPS_ERROR_CACHE_IO;
    if (plan_room(c->cfg, items, count, c->why, c->why_size) != 0) return -1;
    uint64_t copied = 0;
    for (size_t i = 0; i < count; i++) {
        pack_item *it = &items[i];
        if (it->verdict != PACK_TO_LOAD) continue;
        if (c->copy_w < 0) {
            snprintf(c->why, c->why_size, "cannot create a file in %s for the entries it checks: %s", c->cfg->dir,
                     strerror(c->copy_errno));
            return -1;
        }
        const unsigned char *k;
        size_t klen;
        unsigned char *data = read_item(c->fd, it, &k, &klen);
        if (!data || clops_fnv1a(CLOPS_FNV_SEED, k, klen) != it->hash || clops_get_u64(data + 24) != it->sum) {
            c->st = CLOPS_ERROR_BAD_PACK;
            snprintf(c->why, c->why_size,
                     "entry %zu (%s) changed while the pack was imported; this import installed nothing", i + 1,
                     it->name);
            free(data);
            return -1;
        }
        const int rc = clops_file_write_at(c->copy_w, copied, data, (size_t)it->len);
        free(data);
        if (rc != 0) {
            snprintf(c->why, c->why_size, "cannot copy entry %zu for the check: %s; this import installed nothing",
                     i + 1, strerror(errno));
            return -1;
        }
        it->offset = copied;
        copied += it->len;
    }
    return 0;
}

/* Installs every PACK_LOADS item (read from the copy `fd`) that fits the bound;
 * on a failure removes what it installed and returns -1 with `why`. */
static int install(const clops_cache_config *cfg, int fd, pack_item *items, size_t count, char *why, size_t why_size)
{
    uint64_t total;
    if (cache_bytes(cfg, &total, why, why_size) != 0) return -1;
    size_t done = 0;
    for (size_t i = 0; i < count; i++) {
        pack_item *it = &items[i];
        if (it->verdict != PACK_LOADS) continue;
        if (it->len > cfg->max_bytes || total > cfg->max_bytes - it->len) {
            it->verdict = PACK_OVER_LIMIT;
            continue;
        }
        char path[CLOPS_CACHE_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", cfg->dir, it->name);
        const unsigned char *k;
        size_t klen;
        unsigned char *data = read_item(fd, it, &k, &klen);
        clops_file_writer w = {.step = "read"};
        const void *const parts[1] = {data};
        const size_t sizes[1] = {(size_t)it->len};
        if (!data || clops_file_write_parts(path, CLOPS_CACHE_FILE_MODE, CLOPS_FILE_IN_CACHE, parts, sizes, 1, &w) != 0) {
            char step[CLOPS_FILE_PATH_MAX + 128] = "its checked copy could not be read again";
            if (data) clops_file_describe(&w, step, sizeof step);
            snprintf(why, why_size, "installing %s failed (%s); this import installed nothing", it->name, step);
            free(data);
            for (size_t j = 0; j < i; j++) /* the transaction's own files */
                if (items[j].verdict == PACK_LOADS) {
                    snprintf(path, sizeof path, "%s/%s", cfg->dir, items[j].name);
                    unlink(path);
                }
            return -1;
        }
        free(data);
        total += it->len;
        done++;
    }
    return (int)done;
}

static const char *verdict_reason(char v)
{
    switch (v) {
    case PACK_REFUSED: return "the device's driver refused its binary";
    case PACK_CRASHED: return "loading its binary crashed the process that tried it";
    case PACK_HUNG: return "loading its binary did not return in time (CLOPS_IMPORT_LOAD_TIMEOUT)";
    case PACK_NOT_TRIED: return "not loaded: earlier entries crashed or hung the loader too often";
    default: return "";
    }
}

/* The layout callers built against 0.1.0 know: `within_pack` took the last 8 bytes of `reason`. */
_Static_assert(sizeof(clops_pack_report) == 6 * sizeof(size_t) + 256 &&
                   offsetof(clops_pack_report, reason) == 6 * sizeof(size_t),
               "clops_pack_report changed size or layout (ABI)");

/* The report of the import's verdicts. */
static void report(clops_pack_report *r, const pack_item *items, size_t count)
{
    size_t not_tried = 0;
    for (size_t i = 0; i < count; i++) {
        const char v = items[i].verdict;
        r->imported += v == PACK_LOADS;
        r->duplicates += v == PACK_DUPLICATE || v == PACK_IN_PACK; /* both kinds, as it always counted */
        r->within_pack += v == PACK_IN_PACK;
        r->other_device += v == PACK_OTHER_DEVICE;
        r->over_limit += v == PACK_OVER_LIMIT;
        not_tried += v == PACK_NOT_TRIED;
        if (v == PACK_REFUSED || v == PACK_CRASHED || v == PACK_HUNG || v == PACK_NOT_TRIED) {
            if (r->rejected++ == 0)
                snprintf(r->reason, sizeof r->reason, "entry %zu (%s): %s", i + 1, items[i].name, verdict_reason(v));
        }
    }
    if (not_tried) {
        const size_t len = strlen(r->reason);
        snprintf(r->reason + len, sizeof r->reason - len,
                 "; %zu entries not tried after %u crashed or hung the loader", not_tried,
                 CLOPS_PACK_MAX_LOAD_FAILURES);
    }
}

int clops_cache_import(const clops_cache_config *cfg, const char *pack_path, clops_pack_loader loader,
                       const void *loader_opts, clops_pack_report *r, clops_status *st, char *why, size_t why_size)
{
    memset(r, 0, sizeof *r);
    int fd;
    uint64_t size;
    if (clops_file_open(pack_path, PACK_MAX_BYTES, &fd, &size) != 0) {
        *st = errno == EINVAL || errno == EFBIG ? CLOPS_ERROR_BAD_PACK : CLOPS_ERROR_CACHE_IO;
        snprintf(why, why_size, "%s", errno == EINVAL ? "it is not a regular file" : strerror(errno));
        return -1;
    }
    pack_item *items;
    size_t count;
    pass2 p2 = {cfg, fd, -1, 0, CLOPS_SUCCESS, why, why_size};
    int copy = -1;
    *st = CLOPS_ERROR_BAD_PACK;
    int rc = clops_pack_read_items(fd, size, &items, &count, why, why_size); /* pass 1 */
    if (rc == 0) {
        r->entries = count;
        *st = CLOPS_ERROR_OUT_OF_HOST_MEMORY;
        snprintf(why, why_size, "no memory for the names of its %zu entries", count);
        rc = mark_pack_duplicates(items, count);
    }
    bool unsorted = false;
    for (size_t i = 0; rc == 0 && i < count; i++) {
        if (items[i].verdict == PACK_UNCHECKED && in_cache(cfg, fd, &items[i])) items[i].verdict = PACK_DUPLICATE;
        unsorted |= items[i].verdict == PACK_UNCHECKED;
    }
    /* The copy's file, empty until pass 2 writes what it must (the children
     * inherit its descriptor); an error matters only if something is copied. */
    if (rc == 0 && unsorted && clops_file_scratch(cfg->dir, &p2.copy_w, &copy) != 0) p2.copy_errno = errno;
    if (rc == 0) {
        *st = CLOPS_ERROR_CACHE_IO;
        snprintf(why, why_size, "cannot start a process to check its binaries");
        rc = loader(loader_opts, fd, copy, items, count, copy_items, &p2);
        if (rc == -2) *st = p2.st;
    }
    close(fd);
    if (rc == 0) rc = install(cfg, copy, items, count, why, why_size);
    if (rc >= 0) report(r, items, count);
    free(items);
    if (copy >= 0) close(copy);
    if (p2.copy_w >= 0) close(p2.copy_w);
    return rc < 0 ? -1 : (int)r->imported;
}

/* ---- public calls ------------------------------------------------------------------------- */

clops_status clops_cache_export_pack_report_with_options(const clops_context_options *opts, const char *path,
                                                         size_t *count, size_t *removed)
{
    clops_cache_config cfg;
    if (!path) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_export_pack: path is NULL");
    clops_status st = clops_cache_usable(&cfg, opts, false);
    if (st != CLOPS_SUCCESS) return st;
    char why[CLOPS_FILE_PATH_MAX + 256];
    size_t gone = 0;
    const int n = clops_cache_export(&cfg, path, &gone, &st, why, sizeof why);
    if (n < 0) return clops_fail(st, "cannot export the cache %s to %s: %s", cfg.dir, path, why);
    if (count) *count = (size_t)n;
    if (removed) *removed = gone;
    return CLOPS_SUCCESS;
}

clops_status clops_cache_export_pack_with_options(const clops_context_options *opts, const char *path,
                                                  size_t *count)
{
    return clops_cache_export_pack_report_with_options(opts, path, count, NULL);
}

/* ---- adding entries (ahead-of-time binaries) ----------------------------------------------- */

/* Orders pointers to new entries by key (length, then bytes), equal keys by
 * their place in the batch. */
static int key_cmp(const void *k, size_t klen, const clops_pack_new *e)
{
    if (klen != e->key_len) return klen < e->key_len ? -1 : 1;
    return memcmp(k, e->key, klen);
}
static int by_key_then_place(const void *a, const void *b)
{
    const clops_pack_new *x = *(const clops_pack_new *const *)a, *y = *(const clops_pack_new *const *)b;
    const int c = key_cmp(x->key, x->key_len, y);
    return c ? c : (x > y) - (x < y);
}

/* Whether a new entry has the key `k` (a binary search of `sorted`). */
static bool new_has_key(const clops_pack_new *const *sorted, size_t n, const void *k, size_t klen)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = key_cmp(k, klen, sorted[mid]);
        if (c == 0) return true;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return false;
}

/* clops_pack_add under the pack's lock. */
static int add_locked(const char *pack_path, const clops_pack_new *entries, size_t n, clops_status *st, char *why,
                      size_t why_size)
{
    pack_item *items = NULL;
    size_t count = 0;
    int fd = -1;
    uint64_t size = 0;
    *st = CLOPS_ERROR_BAD_PACK;
    if (access(pack_path, F_OK) == 0) { /* an existing pack: its framing checked first, like an import */
        if (clops_file_open(pack_path, PACK_MAX_BYTES, &fd, &size) != 0) {
            if (errno != EINVAL && errno != EFBIG) *st = CLOPS_ERROR_CACHE_IO;
            snprintf(why, why_size, "%s", errno == EINVAL ? "it is not a regular file" : strerror(errno));
            return -1;
        }
        if (clops_pack_read_items(fd, size, &items, &count, why, why_size) != 0) {
            close(fd);
            free(items);
            return -1;
        }
    }
    /* The new entries sorted by key, then the old entries but those with a new
     * entry's key, then the new entries but those with a later one's key:
     * O((old + new) log new) key compares whatever the keys. */
    unsigned char **old = calloc(count ? count : 1, sizeof *old);
    const clops_pack_new **sorted = malloc((n ? n : 1) * sizeof *sorted);
    bool *dropped = calloc(n ? n : 1, sizeof *dropped);
    int rc = old && sorted && dropped ? 0 : -1;
    if (rc != 0) {
        *st = CLOPS_ERROR_OUT_OF_HOST_MEMORY;
        snprintf(why, why_size, "no memory for its %zu entries and %zu new ones", count, n);
    }
    uint64_t kept = 0, added = 0;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) sorted[i] = &entries[i];
        qsort(sorted, n, sizeof *sorted, by_key_then_place);
        for (size_t i = 0; i < n; i++) { /* dropped: a later entry of the batch has its key */
            const bool later = i + 1 < n && key_cmp(sorted[i]->key, sorted[i]->key_len, sorted[i + 1]) == 0;
            dropped[sorted[i] - entries] = later;
            added += !later;
        }
    }
    for (size_t i = 0; rc == 0 && i < count; i++) {
        const unsigned char *k;
        size_t klen;
        old[i] = read_item(fd, &items[i], &k, &klen);
        if (!old[i]) {
            snprintf(why, why_size, "entry %zu changed while the pack was read", i + 1);
            rc = -1;
        } else if (new_has_key(sorted, n, k, klen)) {
            free(old[i]);
            old[i] = NULL;
        } else {
            kept++;
        }
    }
    if (fd >= 0) close(fd);
    if (rc == 0 && kept + added > CLOPS_PACK_MAX_ENTRIES) { /* refused before a byte is written */
        snprintf(why, why_size,
                 "it holds %llu other entries already, %llu would be added, and a pack may hold at most %u",
                 (unsigned long long)kept, (unsigned long long)added, CLOPS_PACK_MAX_ENTRIES);
        rc = -1;
    }
    clops_file_writer w = {.fd = -1};
    if (rc == 0) {
        *st = CLOPS_ERROR_CACHE_IO;
        rc = clops_file_begin(&w, pack_path, PACK_FILE_MODE, 0);
    }
    if (rc == 0) {
        unsigned char head[PACK_HEADER_BYTES], len[8];
        memcpy(head, PACK_MAGIC, 8);
        clops_put_u64(head + 8, kept + added);
        clops_file_write(&w, head, sizeof head);
        for (size_t i = 0; i < count; i++)
            if (old[i]) {
                clops_put_u64(len, items[i].len);
                clops_file_write(&w, len, 8);
                clops_file_write(&w, old[i], (size_t)items[i].len);
            }
        for (size_t i = 0; i < n; i++) {
            if (dropped[i]) continue;
            const clops_pack_new *e = &entries[i];
            unsigned char header[CLOPS_CACHE_ENTRY_HEADER_BYTES];
            clops_cache_entry_header(header, (const unsigned char *)e->key, e->key_len, e->payload, e->payload_len);
            clops_put_u64(len, sizeof header + e->key_len + e->payload_len);
            clops_file_write(&w, len, 8);
            clops_file_write(&w, header, sizeof header);
            clops_file_write(&w, e->key, e->key_len);
            clops_file_write(&w, e->payload, e->payload_len);
        }
        rc = clops_file_commit(&w) == 0 ? (int)(kept + added) : -1;
    }
    if (rc < 0 && *st == CLOPS_ERROR_CACHE_IO) clops_file_describe(&w, why, why_size);
    for (size_t i = 0; old && i < count; i++) free(old[i]);
    free(old);
    free(sorted);
    free(dropped);
    free(items);
    return rc;
}

/* Adders of packs in this process: fcntl locks exclude other processes only. */
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;

int clops_pack_add(const char *pack_path, const clops_pack_new *entries, size_t n, clops_status *st,
                   char *why, size_t why_size)
{
    struct stat target;
    if (stat(pack_path, &target) == 0 && !S_ISREG(target.st_mode)) { /* refused as before, no lock beside it */
        *st = CLOPS_ERROR_BAD_PACK;
        snprintf(why, why_size, "it is not a regular file");
        return -1;
    }
    char lock_path[CLOPS_FILE_PATH_MAX];
    clops_file_lock lock;
    *st = CLOPS_ERROR_CACHE_IO;
    if (snprintf(lock_path, sizeof lock_path, "%s.lock", pack_path) >= (int)sizeof lock_path) {
        snprintf(why, why_size, "its path is longer than %d bytes", CLOPS_FILE_PATH_MAX - 6);
        return -1;
    }
    if (clops_file_lock_take(&lock, lock_path, &add_lock) != 0) {
        snprintf(why, why_size, "cannot lock it (%s): %s", lock_path, strerror(errno));
        return -1;
    }
    const int rc = add_locked(pack_path, entries, n, st, why, why_size);
    clops_file_lock_release(&lock, lock_path, true); /* no lock file stays beside the pack */
    return rc;
}

clops_status clops_cache_export_pack(const char *path, size_t *count)
{
    return clops_cache_export_pack_with_options(NULL, path, count);
}
