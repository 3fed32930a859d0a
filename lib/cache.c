/* cache.c - the on-disk program cache: built binaries kept across processes.
 *
 * Why: a cold PoCL build of one clops program takes about 1 s on a 2-core x86-64
 * machine (clBuildProgram ~1.0 s plus ~0.15 s for the first launch); with PoCL's
 * own kernel cache warm it still takes 0.07 to 0.13 s, because PoCL re-runs the
 * front end to find its cache entry. clCreateProgramWithBinary from clops's
 * entry takes 1 to 3 ms. Reading CL_PROGRAM_BINARIES after a build costs no
 * extra compile (measured: < 1 ms). So clops keeps its own entries and loads
 * them with clCreateProgramWithBinary.
 *
 * Entry file "<16 hex digits of the key hash>.bin":
 *   magic "CLOPSBIN" | u32 format version | u32 key length | u64 payload length |
 *   u64 checksum (FNV-1a over key and payload) | key | payload
 * The key is the whole identity (format and clops versions, device identity,
 * normalised build options, the complete kernel source), compared byte for byte
 * on load, so a hash collision or a stale entry is a miss, never a wrong binary.
 * A truncated, corrupted or foreign entry is removed and rebuilt.
 *
 * Writes go to a temporary file in the same directory, then rename(): readers
 * see the old entry or the new one, never a torn one, and nothing is deleted
 * first. A hit refreshes the file's mtime; eviction removes the least recently
 * used entries until the directory is under its bound. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "internal.h"

#define ENTRY_MAGIC "CLOPSBIN"
#define PACK_MAGIC "CLOPSPAK"
#define HEADER_BYTES (8 + 4 + 4 + 8 + 8)
#define MAX_KEY_BYTES (16u << 20)
#define MAX_PAYLOAD_BYTES (1024ull << 20)

uint64_t clops_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#define FNV_SEED 0xcbf29ce484222325ull

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* ---- configuration ------------------------------------------------------------------- */

static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || *s < '0' || *s > '9') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    uint64_t mul = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mul = 1ull << 10, end++; break;
    case 'm': case 'M': mul = 1ull << 20, end++; break;
    case 'g': case 'G': mul = 1ull << 30, end++; break;
    default: return -1;
    }
    if (*end || (v && mul > UINT64_MAX / v)) return -1;
    *out = v * mul;
    return 0;
}

/* mkdir -p for the cache directory (mode 0700 for what it creates). */
static int make_dirs(const char *path)
{
    char buf[CLOPS_CACHE_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return ENAMETOOLONG;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (clops_cl.io_mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
        *p = '/';
    }
    if (clops_cl.io_mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
    return 0;
}

void clops_cache_config_from_env(clops_cache_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_bytes = CLOPS_CACHE_DEFAULT_MAX_BYTES;
    const char *mode = getenv("CLOPS_CACHE");
    if (mode && strcmp(mode, "off") == 0) {
        cfg->mode = CLOPS_CACHE_OFF;
        snprintf(cfg->status, sizeof cfg->status, "off (CLOPS_CACHE=off)");
        return;
    }
    cfg->mode = mode && strcmp(mode, "ro") == 0 ? CLOPS_CACHE_READ_ONLY : CLOPS_CACHE_READ_WRITE;
    const char *size = getenv("CLOPS_CACHE_MAX_SIZE");
    uint64_t max;
    if (size && *size && parse_bytes(size, &max) == 0) cfg->max_bytes = max;

    const char *dir = getenv("CLOPS_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (dir && *dir)
        n = snprintf(cfg->dir, sizeof cfg->dir, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(cfg->dir, sizeof cfg->dir, "%s/clops", xdg);
    else if (home && *home)
        n = snprintf(cfg->dir, sizeof cfg->dir, "%s/.cache/clops", home);
    else
        n = -1;
    if (n < 0 || n >= (int)sizeof cfg->dir) {
        cfg->mode = CLOPS_CACHE_OFF;
        cfg->dir[0] = '\0';
        snprintf(cfg->status, sizeof cfg->status, "off (no CLOPS_CACHE_DIR, XDG_CACHE_HOME or HOME)");
        return;
    }
    int err = cfg->mode == CLOPS_CACHE_READ_WRITE ? make_dirs(cfg->dir) : 0;
    struct stat st;
    if (!err && (stat(cfg->dir, &st) != 0 || !S_ISDIR(st.st_mode))) err = errno ? errno : ENOTDIR;
    if (!err && !S_ISDIR(st.st_mode)) err = ENOTDIR;
    if (err || access(cfg->dir, cfg->mode == CLOPS_CACHE_READ_WRITE ? (R_OK | W_OK | X_OK) : (R_OK | X_OK)) != 0) {
        const int e = err ? err : errno;
        cfg->mode = CLOPS_CACHE_OFF;
        snprintf(cfg->status, sizeof cfg->status, "unavailable, running uncached (%s: %s)", cfg->dir, strerror(e));
        return;
    }
    snprintf(cfg->status, sizeof cfg->status, "%s (%s)", cfg->dir,
             cfg->mode == CLOPS_CACHE_READ_ONLY ? "read-only" : "read-write");
}

/* ---- entries ---------------------------------------------------------------------------- */

static void entry_path(const clops_cache_config *cfg, const char *key, size_t key_len, char *out, size_t size)
{
    snprintf(out, size, "%s/%016llx.bin", cfg->dir, (unsigned long long)clops_fnv1a(FNV_SEED, key, key_len));
}

/* Reads a whole file into memory (at most `limit` bytes). */
static int read_file(const char *path, uint64_t limit, unsigned char **data, size_t *size)
{
    *data = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= limit) {
        *size = (size_t)st.st_size;
        *data = malloc(*size ? *size : 1);
        size_t got = 0;
        while (*data && got < *size) {
            const ssize_t r = read(fd, *data + got, *size - got);
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (*data && got == *size) rc = 0;
    }
    close(fd);
    if (rc != 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

/* Checks an entry's framing and checksum; on success points at its key and payload. */
static bool entry_parse(const unsigned char *data, size_t size, const unsigned char **key, size_t *key_len,
                        const unsigned char **payload, size_t *payload_len)
{
    if (size < HEADER_BYTES || memcmp(data, ENTRY_MAGIC, 8) != 0) return false;
    if (get_u32(data + 8) != CLOPS_CACHE_FORMAT_VERSION) return false;
    const uint64_t klen = get_u32(data + 12), plen = get_u64(data + 16), sum = get_u64(data + 24);
    if (klen > MAX_KEY_BYTES || plen > MAX_PAYLOAD_BYTES || HEADER_BYTES + klen + plen != size) return false;
    *key = data + HEADER_BYTES;
    *key_len = (size_t)klen;
    *payload = *key + klen;
    *payload_len = (size_t)plen;
    return clops_fnv1a(clops_fnv1a(FNV_SEED, *key, *key_len), *payload, *payload_len) == sum;
}

bool clops_cache_load(const clops_cache_config *cfg, const char *key, size_t key_len, unsigned char **payload,
                      size_t *payload_len)
{
    *payload = NULL;
    if (cfg->mode == CLOPS_CACHE_OFF) return false;
    char path[CLOPS_CACHE_PATH_MAX + 32];
    entry_path(cfg, key, key_len, path, sizeof path);
    unsigned char *data;
    size_t size;
    if (read_file(path, HEADER_BYTES + MAX_KEY_BYTES + MAX_PAYLOAD_BYTES, &data, &size) != 0) return false;
    const unsigned char *k, *p;
    size_t klen, plen;
    const bool valid = entry_parse(data, size, &k, &klen, &p, &plen);
    if (!valid) {
        if (cfg->mode == CLOPS_CACHE_READ_WRITE) unlink(path); /* torn, corrupted or foreign */
        free(data);
        return false;
    }
    if (klen != key_len || memcmp(k, key, key_len) != 0) { /* another key with the same hash */
        free(data);
        return false;
    }
    *payload = malloc(plen ? plen : 1);
    if (*payload) {
        memcpy(*payload, p, plen);
        *payload_len = plen;
        if (cfg->mode == CLOPS_CACHE_READ_WRITE) utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
    }
    free(data);
    return *payload != NULL;
}

void clops_cache_discard(const clops_cache_config *cfg, const char *key, size_t key_len)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE) return;
    char path[CLOPS_CACHE_PATH_MAX + 32];
    entry_path(cfg, key, key_len, path, sizeof path);
    unlink(path);
}

/* Writes `data` to `path` through a temporary file in the same directory. */
static int write_atomic(const char *dir, const char *path, const unsigned char *const parts[], const size_t sizes[],
                        int nparts)
{
    char tmp[CLOPS_CACHE_PATH_MAX + 32];
    if (snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir) >= (int)sizeof tmp) return -1;
    const int fd = clops_cl.io_mkstemp(tmp);
    if (fd < 0) return -1;
    int ok = 1;
    for (int i = 0; ok && i < nparts; i++) {
        size_t done = 0;
        while (ok && done < sizes[i]) {
            const ssize_t w = clops_cl.io_write(fd, parts[i] + done, sizes[i] - done);
            if (w <= 0) ok = 0;
            else done += (size_t)w;
        }
    }
    if (ok && clops_cl.io_fsync(fd) != 0) ok = 0;
    if (close(fd) != 0) ok = 0;
    if (ok && clops_cl.io_rename(tmp, path) != 0) ok = 0;
    if (!ok) unlink(tmp);
    return ok ? 0 : -1;
}

/* An entry's header for `key` and `payload`. */
static void entry_header(unsigned char header[HEADER_BYTES], const unsigned char *key, size_t key_len,
                         const unsigned char *payload, size_t payload_len)
{
    memcpy(header, ENTRY_MAGIC, 8);
    put_u32(header + 8, CLOPS_CACHE_FORMAT_VERSION);
    put_u32(header + 12, (uint32_t)key_len);
    put_u64(header + 16, payload_len);
    put_u64(header + 24, clops_fnv1a(clops_fnv1a(FNV_SEED, key, key_len), payload, payload_len));
}

void clops_cache_store(const clops_cache_config *cfg, const char *key, size_t key_len, const unsigned char *payload,
                       size_t payload_len)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE || key_len > MAX_KEY_BYTES || payload_len > MAX_PAYLOAD_BYTES) return;
    unsigned char header[HEADER_BYTES];
    entry_header(header, (const unsigned char *)key, key_len, payload, payload_len);
    char path[CLOPS_CACHE_PATH_MAX + 32];
    entry_path(cfg, key, key_len, path, sizeof path);
    const unsigned char *parts[3] = {header, (const unsigned char *)key, payload};
    const size_t sizes[3] = {HEADER_BYTES, key_len, payload_len};
    if (write_atomic(cfg->dir, path, parts, sizes, 3) == 0) clops_cache_prune_to(cfg, cfg->max_bytes);
}

/* ---- maintenance: list, prune, clear, export, import ------------------------------------ */

typedef struct file_entry {
    char name[64];
    uint64_t size;
    struct timespec used;
} file_entry;

static bool is_entry_name(const char *name)
{
    const size_t n = strlen(name);
    return n == 20 && strcmp(name + 16, ".bin") == 0 && strspn(name, "0123456789abcdef") == 16;
}

/* Every entry file of the directory, least recently used first. */
static int scan(const clops_cache_config *cfg, file_entry **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(cfg->dir);
    if (!d) return -1;
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!is_entry_name(e->d_name)) continue;
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%.20s", cfg->dir, e->d_name); /* names are 20 chars */
        struct stat st;
        if (stat(path, &st) != 0) continue; /* removed meanwhile */
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            file_entry *grown = realloc(*out, cap * sizeof **out);
            if (!grown) {
                rc = -1;
                break;
            }
            *out = grown;
        }
        file_entry *f = &(*out)[(*count)++];
        snprintf(f->name, sizeof f->name, "%.20s", e->d_name);
        f->size = (uint64_t)st.st_size;
        f->used = st.st_mtim;
    }
    closedir(d);
    for (size_t i = 1; i < *count; i++) /* insertion sort by mtime: caches hold few entries */
        for (size_t j = i; j > 0; j--) {
            file_entry *a = &(*out)[j - 1], *b = &(*out)[j];
            if (a->used.tv_sec < b->used.tv_sec || (a->used.tv_sec == b->used.tv_sec && a->used.tv_nsec <= b->used.tv_nsec))
                break;
            file_entry t = *a;
            *a = *b;
            *b = t;
        }
    return rc;
}

int clops_cache_prune_to(const clops_cache_config *cfg, uint64_t max_bytes)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE) return 0;
    file_entry *files;
    size_t count;
    if (scan(cfg, &files, &count) != 0) {
        free(files);
        return -1;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++) total += files[i].size;
    int removed = 0;
    for (size_t i = 0; i < count && total > max_bytes; i++) {
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%s", cfg->dir, files[i].name);
        if (unlink(path) == 0) removed++;
        total -= files[i].size;
    }
    free(files);
    return removed;
}

int clops_cache_list(const clops_cache_config *cfg, clops_cache_visit visit, void *user)
{
    file_entry *files;
    size_t count;
    if (cfg->mode == CLOPS_CACHE_OFF || scan(cfg, &files, &count) != 0) return -1;
    for (size_t i = 0; i < count; i++) {
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%s", cfg->dir, files[i].name);
        unsigned char *data;
        size_t size;
        const unsigned char *k = NULL, *p;
        size_t klen = 0, plen = 0;
        const bool ok = read_file(path, HEADER_BYTES + MAX_KEY_BYTES + MAX_PAYLOAD_BYTES, &data, &size) == 0 &&
                        entry_parse(data, size, &k, &klen, &p, &plen);
        visit(user, files[i].name, files[i].size, (long long)files[i].used.tv_sec, ok ? (const char *)k : NULL,
              ok ? klen : 0);
        free(data);
    }
    free(files);
    return (int)count;
}

int clops_cache_export(const clops_cache_config *cfg, const char *pack_path)
{
    file_entry *files;
    size_t count;
    if (cfg->mode == CLOPS_CACHE_OFF || scan(cfg, &files, &count) != 0) return -1;
    FILE *out = fopen(pack_path, "wb");
    int written = 0;
    if (!out) {
        free(files);
        return -1;
    }
    unsigned char head[16];
    memcpy(head, PACK_MAGIC, 8);
    put_u64(head + 8, 0); /* entry count, patched below */
    int ok = fwrite(head, 1, sizeof head, out) == sizeof head;
    for (size_t i = 0; ok && i < count; i++) {
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%s", cfg->dir, files[i].name);
        unsigned char *data;
        size_t size;
        const unsigned char *k, *p;
        size_t klen, plen;
        if (read_file(path, HEADER_BYTES + MAX_KEY_BYTES + MAX_PAYLOAD_BYTES, &data, &size) != 0) continue;
        if (entry_parse(data, size, &k, &klen, &p, &plen)) {
            unsigned char len[8];
            put_u64(len, size);
            ok = fwrite(len, 1, 8, out) == 8 && fwrite(data, 1, size, out) == size;
            written += ok;
        }
        free(data);
    }
    put_u64(head + 8, (uint64_t)written);
    ok = ok && fseek(out, 0, SEEK_SET) == 0 && fwrite(head, 1, sizeof head, out) == sizeof head;
    ok = (fclose(out) == 0) && ok;
    free(files);
    if (!ok) {
        unlink(pack_path);
        return -1;
    }
    return written;
}

/* Walks a pack's entries: with `install`, writes each; without, only checks them.
 * Returns the count, or -1 at the first malformed byte (trailing bytes too). */
static int pack_walk(const clops_cache_config *cfg, const unsigned char *data, size_t size, bool install)
{
    if (size < 16 || memcmp(data, PACK_MAGIC, 8) != 0) return -1;
    const uint64_t count = get_u64(data + 8);
    size_t pos = 16;
    int done = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (size - pos < 8) return -1;
        const uint64_t len = get_u64(data + pos);
        pos += 8;
        const unsigned char *k, *p;
        size_t klen, plen;
        if (len > size - pos || !entry_parse(data + pos, (size_t)len, &k, &klen, &p, &plen)) return -1;
        if (install) {
            char path[CLOPS_CACHE_PATH_MAX + 32];
            entry_path(cfg, (const char *)k, klen, path, sizeof path);
            const unsigned char *parts[1] = {data + pos};
            const size_t sizes[1] = {(size_t)len};
            if (write_atomic(cfg->dir, path, parts, sizes, 1) != 0) return -1;
        }
        done++;
        pos += (size_t)len;
    }
    return pos == size ? done : -1;
}

int clops_cache_import(const clops_cache_config *cfg, const char *pack_path)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE) return -1;
    unsigned char *data;
    size_t size;
    if (read_file(pack_path, UINT64_C(1) << 40, &data, &size) != 0) return -1;
    /* The whole pack is checked before anything is installed: a bad pack installs nothing. */
    int imported = pack_walk(cfg, data, size, false);
    if (imported >= 0) imported = pack_walk(cfg, data, size, true);
    free(data);
    return imported;
}

int clops_cache_clear(const clops_cache_config *cfg)
{
    return clops_cache_prune_to(cfg, 0);
}

/* ---- public calls ------------------------------------------------------------------------- */

const char *clops_cache_status(char *buf, size_t size)
{
    clops_cache_config cfg;
    clops_cache_config_from_env(&cfg);
    if (buf && size) snprintf(buf, size, "%s", cfg.status);
    return buf;
}

/* The configuration, or CLOPS_ERROR_CACHE_UNAVAILABLE if the cache is off (or,
 * with `writable`, read-only). */
static clops_status usable_config(clops_cache_config *cfg, bool writable)
{
    clops_cache_config_from_env(cfg);
    if (cfg->mode == CLOPS_CACHE_OFF || (writable && cfg->mode != CLOPS_CACHE_READ_WRITE))
        return clops_fail(CLOPS_ERROR_CACHE_UNAVAILABLE, "program cache %s", cfg->status);
    return CLOPS_SUCCESS;
}

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

clops_status clops_cache_list_entries(clops_cache_entry_fn fn, void *user, size_t *count)
{
    clops_cache_config cfg;
    if (!fn) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_list_entries: fn is NULL");
    clops_status st = usable_config(&cfg, false);
    if (st != CLOPS_SUCCESS) return st;
    visit_ctx v = {fn, user};
    const int n = clops_cache_list(&cfg, visit_adapter, &v);
    if (n < 0) return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot read the cache directory %s", cfg.dir);
    if (count) *count = (size_t)n;
    return CLOPS_SUCCESS;
}

static clops_status prune(uint64_t bound, size_t *removed)
{
    clops_cache_config cfg;
    clops_status st = usable_config(&cfg, true);
    if (st != CLOPS_SUCCESS) return st;
    const int n = clops_cache_prune_to(&cfg, bound == UINT64_MAX ? cfg.max_bytes : bound);
    if (n < 0) return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot read the cache directory %s", cfg.dir);
    if (removed) *removed = (size_t)n;
    return CLOPS_SUCCESS;
}

clops_status clops_cache_prune(size_t *removed)
{
    return prune(UINT64_MAX, removed);
}

clops_status clops_cache_clear_all(size_t *removed)
{
    return prune(0, removed);
}

clops_status clops_cache_export_pack(const char *path, size_t *count)
{
    clops_cache_config cfg;
    if (!path) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_export_pack: path is NULL");
    clops_status st = usable_config(&cfg, false);
    if (st != CLOPS_SUCCESS) return st;
    const int n = clops_cache_export(&cfg, path);
    if (n < 0) return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot export the cache %s to %s", cfg.dir, path);
    if (count) *count = (size_t)n;
    return CLOPS_SUCCESS;
}

clops_status clops_cache_import_pack(const char *path, size_t *count)
{
    clops_cache_config cfg;
    if (!path) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_import_pack: path is NULL");
    clops_status st = usable_config(&cfg, true);
    if (st != CLOPS_SUCCESS) return st;
    const int n = clops_cache_import(&cfg, path);
    if (n < 0)
        return clops_fail(CLOPS_ERROR_BAD_PACK, "%s is not a readable clops kernel pack (or %s is not writable)", path,
                          cfg.dir);
    if (count) *count = (size_t)n;
    return CLOPS_SUCCESS;
}
