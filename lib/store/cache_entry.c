/* cache_entry.c - program cache entries: built binaries kept across processes.
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
 * Entries are written with the store's atomic writer (file.h): readers see the
 * old entry or the new one, never a torn one, and nothing is deleted first.
 * Inside the cache directory no symbolic link is followed (N3): an entry is read
 * with O_NOFOLLOW, a link in its place is removed (the link, not what it names)
 * and a store replaces it (CLOPS_FILE_IN_CACHE). A
 * hit refreshes the file's mtime. Storing is cache_dir.c's (clops_cache_store):
 * it writes the entry framed here, then evicts the least recently used entries
 * until the directory is under its bound. This file calls no other unit of the
 * cache; cache_dir.c and pack.c call it. */
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

#define ENTRY_MAGIC "CLOPSBIN"
#define HEADER_BYTES CLOPS_CACHE_ENTRY_HEADER_BYTES

/* ---- entries ---------------------------------------------------------------------------- */

void clops_cache_entry_path(const clops_cache_config *cfg, const char *key, size_t key_len, char *out, size_t size)
{
    snprintf(out, size, "%s/%016llx.bin", cfg->dir, (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, key, key_len));
}

bool clops_cache_entry_parse(const unsigned char *data, size_t size, const unsigned char **key, size_t *key_len,
                        const unsigned char **payload, size_t *payload_len)
{
    if (size < HEADER_BYTES || memcmp(data, ENTRY_MAGIC, 8) != 0) return false;
    if (clops_get_u32(data + 8) != CLOPS_CACHE_FORMAT_VERSION) return false;
    const uint64_t klen = clops_get_u32(data + 12), plen = clops_get_u64(data + 16), sum = clops_get_u64(data + 24);
    if (klen > CLOPS_CACHE_MAX_KEY_BYTES || plen > CLOPS_CACHE_MAX_PAYLOAD_BYTES || HEADER_BYTES + klen + plen != size) return false;
    *key = data + HEADER_BYTES;
    *key_len = (size_t)klen;
    *payload = *key + klen;
    *payload_len = (size_t)plen;
    return clops_fnv1a(clops_fnv1a(CLOPS_FNV_SEED, *key, *key_len), *payload, *payload_len) == sum;
}

bool clops_cache_load(const clops_cache_config *cfg, const char *key, size_t key_len, unsigned char **payload,
                      size_t *payload_len)
{
    *payload = NULL;
    if (cfg->mode == CLOPS_CACHE_OFF) return false;
    char path[CLOPS_CACHE_PATH_MAX + 32];
    clops_cache_entry_path(cfg, key, key_len, path, sizeof path);
    unsigned char *data;
    size_t size;
    if (clops_file_read_flags(path, CLOPS_CACHE_ENTRY_MAX_BYTES, CLOPS_FILE_IN_CACHE, &data, &size) != 0) {
        /* Not a regular file (a FIFO, a device, a symbolic link, never followed) or
         * too big: never an entry clops wrote. unlink removes a link, not its target. */
        if ((errno == EINVAL || errno == EFBIG || errno == ELOOP) && cfg->mode == CLOPS_CACHE_READ_WRITE) unlink(path);
        return false;
    }
    const unsigned char *k, *p;
    size_t klen, plen;
    const bool valid = clops_cache_entry_parse(data, size, &k, &klen, &p, &plen);
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
        if (cfg->mode == CLOPS_CACHE_READ_WRITE) utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW); /* recently used */
    }
    free(data);
    return *payload != NULL;
}

void clops_cache_discard(const clops_cache_config *cfg, const char *key, size_t key_len)
{
    if (cfg->mode != CLOPS_CACHE_READ_WRITE) return;
    char path[CLOPS_CACHE_PATH_MAX + 32];
    clops_cache_entry_path(cfg, key, key_len, path, sizeof path);
    unlink(path);
}

void clops_cache_entry_header(unsigned char header[HEADER_BYTES], const unsigned char *key, size_t key_len,
                         const unsigned char *payload, size_t payload_len)
{
    memcpy(header, ENTRY_MAGIC, 8);
    clops_put_u32(header + 8, CLOPS_CACHE_FORMAT_VERSION);
    clops_put_u32(header + 12, (uint32_t)key_len);
    clops_put_u64(header + 16, payload_len);
    clops_put_u64(header + 24, clops_fnv1a(clops_fnv1a(CLOPS_FNV_SEED, key, key_len), payload, payload_len));
}
