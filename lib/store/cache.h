/* cache.h - the on-disk program cache: configuration (cache_config.c), entries
 * (cache_entry.c), the directory's maintenance (cache_dir.c) and kernel packs
 * (pack.c). All of them write through file.h. Internal. */
#ifndef CLOPS_CACHE_H
#define CLOPS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clops/clops.h"
#include "store/pack.h" /* clops_pack_loader */

#define CLOPS_CACHE_FORMAT_VERSION 1u
#define CLOPS_CACHE_DEFAULT_MAX_BYTES (256ull << 20)
#define CLOPS_CACHE_PATH_MAX 4096
/* Mode of the files the cache creates (its directory is created 0700). */
#define CLOPS_CACHE_FILE_MODE 0600

typedef enum { CLOPS_CACHE_OFF, CLOPS_CACHE_READ_ONLY, CLOPS_CACHE_READ_WRITE } clops_cache_mode;

typedef struct clops_cache_config {
    clops_cache_mode mode;
    char dir[CLOPS_CACHE_PATH_MAX];
    uint64_t max_bytes;
    char status[CLOPS_CACHE_PATH_MAX + 128]; /* one line: where, or why off */
} clops_cache_config;

/* ---- configuration (cache_config.c) ------------------------------------------------------ */

/* The cache policy, directory (else XDG_CACHE_HOME or HOME) and size bound of
 * `o`; creates the directory when writable. A directory that cannot be used
 * turns the cache off, with the reason in `status`. */
void clops_cache_config_init(clops_cache_config *cfg, const clops_context_options *o);
/* The same from a caller's options (NULL: the defaults and the environment,
 * core/options.c); a bad value turns the cache off, with its message in `status`,
 * and is returned. */
clops_status clops_cache_config_from(clops_cache_config *cfg, const clops_context_options *opts);
clops_status clops_cache_config_from_env(clops_cache_config *cfg); /* clops_cache_config_from(cfg, NULL) */
/* The configuration for a public cache call (opts as above), or
 * CLOPS_ERROR_CACHE_UNAVAILABLE if the cache is off (or, with `writable`, read-only). */
clops_status clops_cache_usable(clops_cache_config *cfg, const clops_context_options *opts, bool writable);

/* ---- entries (cache_entry.c) ------------------------------------------------------------- */

/* The payload stored under `key`, or false (a miss; bad entries are removed). */
bool clops_cache_load(const clops_cache_config *cfg, const char *key, size_t key_len, unsigned char **payload,
                      size_t *payload_len);
/* Stores atomically, then evicts least recently used entries past the bound (cache_dir.c).
 * Failures (full disk, vanished directory) are silent: the cache is an optimisation. */
void clops_cache_store(const clops_cache_config *cfg, const char *key, size_t key_len, const unsigned char *payload,
                       size_t payload_len);
/* Removes the entry for `key` (one the driver refused). */
void clops_cache_discard(const clops_cache_config *cfg, const char *key, size_t key_len);

/* The largest entry file a reader accepts. */
#define CLOPS_CACHE_ENTRY_HEADER_BYTES (8 + 4 + 4 + 8 + 8)
#define CLOPS_CACHE_MAX_KEY_BYTES (16u << 20)
#define CLOPS_CACHE_MAX_PAYLOAD_BYTES (1024ull << 20)
#define CLOPS_CACHE_ENTRY_MAX_BYTES \
    (CLOPS_CACHE_ENTRY_HEADER_BYTES + CLOPS_CACHE_MAX_KEY_BYTES + CLOPS_CACHE_MAX_PAYLOAD_BYTES)
/* The file of the entry for `key`: "<dir>/<16 hex digits of its hash>.bin". */
void clops_cache_entry_path(const clops_cache_config *cfg, const char *key, size_t key_len, char *out,
                            size_t size);
/* An entry file's header for `key` and `payload` (the file is header, key, payload). */
void clops_cache_entry_header(unsigned char header[CLOPS_CACHE_ENTRY_HEADER_BYTES], const unsigned char *key,
                              size_t key_len, const unsigned char *payload, size_t payload_len);
/* Checks an entry's framing and checksum; on success points at its key and payload. */
bool clops_cache_entry_parse(const unsigned char *data, size_t size, const unsigned char **key, size_t *key_len,
                             const unsigned char **payload, size_t *payload_len);

/* ---- the directory (cache_dir.c) --------------------------------------------------------- */

/* A temporary file older than this was left by a writer killed before its rename. */
#define CLOPS_CACHE_TEMP_STALE_SECONDS 3600
/* One file of the directory that clops put there. */
typedef struct clops_cache_file {
    char name[64];
    uint64_t size;
    struct timespec used;
    bool entry; /* "<16 hex>.bin"; else a temporary file ".tmp-XXXXXX" */
    bool stale; /* a temporary file older than CLOPS_CACHE_TEMP_STALE_SECONDS */
} clops_cache_file;
/* Every entry and temporary file of the directory, least recently used first
 * (freed by the caller). 0, or -1 if the directory cannot be read. */
int clops_cache_scan(const clops_cache_config *cfg, clops_cache_file **out, size_t *count);

typedef void (*clops_cache_visit)(void *user, const char *file, uint64_t bytes, long long mtime, const char *key,
                                  size_t key_len);
/* Visits every entry and temporary file, least recently used first (key NULL for
 * an invalid entry or a temporary file).
 * Returns the count, or -1 if the directory cannot be read. */
int clops_cache_list(const clops_cache_config *cfg, clops_cache_visit visit, void *user);
/* Evicts least recently used entries until at most max_bytes remain; returns how many. */
int clops_cache_prune_to(const clops_cache_config *cfg, uint64_t max_bytes);
/* Removes every entry and stale temporary file; returns how many. */
int clops_cache_clear(const clops_cache_config *cfg);
/* The tuner's lock files in the cache directory: CLOPS_TUNE_LOCK_PREFIX and 16 hex
 * digits. clops_cache_clear removes those no process holds (tune_db.c). */
#define CLOPS_TUNE_LOCK_PREFIX "lock-tune-"
void clops_tuning_locks_remove(const clops_cache_config *cfg);

/* ---- packs (pack.c) ---------------------------------------------------------------------- */

/* A pack file of every valid entry; returns the count, or -1 with `*st` and `why`
 * (CLOPS_ERROR_BAD_PACK for a cache of more entries than a pack may hold).
 * `*removed`: entries another process removed during the export (left out). */
int clops_cache_export(const clops_cache_config *cfg, const char *pack_path, size_t *removed, clops_status *st,
                       char *why, size_t why_size);
/* The import transaction of clops_cache_import_pack_report(): reads and checks
 * the pack, has `loader` (store/pack.h) sort the new entries by device and load
 * those for a device here, installs those that loaded; the count installed, or
 * -1 with `*st` and `why`. */
int clops_cache_import(const clops_cache_config *cfg, const char *pack_path, clops_pack_loader loader,
                       const void *loader_opts, clops_pack_report *report, clops_status *st, char *why,
                       size_t why_size);
/* An entry to add to a pack: its key and payload. */
typedef struct clops_pack_new {
    const char *key;
    size_t key_len;
    const unsigned char *payload;
    size_t payload_len;
} clops_pack_new;
/* Adds the `n` entries to the pack (created if missing) in one read of the old
 * pack and one atomic write: an old entry with a new one's key is replaced, and
 * of new entries with one key the last wins. Returns the pack's entry count, or
 * -1 with `*st` and `why`, and the pack as it was: CLOPS_ERROR_BAD_PACK for a
 * malformed pack or more than CLOPS_PACK_MAX_ENTRIES entries afterwards,
 * CLOPS_ERROR_CACHE_IO when it cannot be read or written. */
int clops_pack_add(const char *pack_path, const clops_pack_new *entries, size_t n, clops_status *st, char *why,
                   size_t why_size);

/* ---- bytes and hashes shared by the store's formats ---------------------------------------- */

#define CLOPS_FNV_SEED 0xcbf29ce484222325ull
/* FNV-1a, 64 bits, continuing from `h` (start with CLOPS_FNV_SEED). Inline, like
 * the byte helpers, so that no unit of the store calls another for it. */
static inline uint64_t clops_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static inline void clops_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void clops_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t clops_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static inline uint64_t clops_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

#endif
