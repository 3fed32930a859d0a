/* cache.h - the on-disk program cache (cache.c). Internal. */
#ifndef CLOPS_CACHE_H
#define CLOPS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLOPS_CACHE_FORMAT_VERSION 1u
#define CLOPS_CACHE_DEFAULT_MAX_BYTES (256ull << 20)
#define CLOPS_CACHE_PATH_MAX 4096

typedef enum { CLOPS_CACHE_OFF, CLOPS_CACHE_READ_ONLY, CLOPS_CACHE_READ_WRITE } clops_cache_mode;

typedef struct clops_cache_config {
    clops_cache_mode mode;
    char dir[CLOPS_CACHE_PATH_MAX];
    uint64_t max_bytes;
    char status[CLOPS_CACHE_PATH_MAX + 128]; /* one line: where, or why off */
} clops_cache_config;

/* CLOPS_CACHE (off|ro), CLOPS_CACHE_DIR, XDG_CACHE_HOME, HOME and
 * CLOPS_CACHE_MAX_SIZE; creates the directory when writable. A directory that
 * cannot be used turns the cache off, with the reason in `status`. */
void clops_cache_config_from_env(clops_cache_config *cfg);

/* The payload stored under `key`, or false (a miss; bad entries are removed). */
bool clops_cache_load(const clops_cache_config *cfg, const char *key, size_t key_len, unsigned char **payload,
                      size_t *payload_len);
/* Stores atomically, then evicts least recently used entries past the bound.
 * Failures (full disk, vanished directory) are silent: the cache is an optimisation. */
void clops_cache_store(const clops_cache_config *cfg, const char *key, size_t key_len, const unsigned char *payload,
                       size_t payload_len);
/* Removes the entry for `key` (one the driver refused). */
void clops_cache_discard(const clops_cache_config *cfg, const char *key, size_t key_len);

typedef void (*clops_cache_visit)(void *user, const char *file, uint64_t bytes, long long mtime, const char *key,
                                  size_t key_len);
/* Visits every entry, least recently used first (key NULL for an invalid one).
 * Returns the count, or -1 if the directory cannot be read. */
int clops_cache_list(const clops_cache_config *cfg, clops_cache_visit visit, void *user);
/* Evicts least recently used entries until at most max_bytes remain; returns how many. */
int clops_cache_prune_to(const clops_cache_config *cfg, uint64_t max_bytes);
int clops_cache_clear(const clops_cache_config *cfg);
/* A pack file of every valid entry; returns the count or -1. */
int clops_cache_export(const clops_cache_config *cfg, const char *pack_path);
/* Validates and installs every entry of a pack; returns the count or -1. */
int clops_cache_import(const clops_cache_config *cfg, const char *pack_path);

uint64_t clops_fnv1a(uint64_t h, const void *data, size_t n);

#endif
