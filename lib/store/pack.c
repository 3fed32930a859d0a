/* pack.c - kernel packs: every valid entry of a cache in one file, to carry
 * built kernels to another machine or into a container image.
 *
 * Pack file: magic "CLOPSPAK" | u64 entry count | per entry: u64 length | the
 * entry file's bytes (cache_entry.c's format, checked like any entry). Export
 * writes through the atomic writer (file.h); import checks the whole pack before
 * it installs anything, then installs each entry atomically. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "store/file.h"

#define PACK_MAGIC "CLOPSPAK"
#define PACK_HEADER_BYTES 16
#define PACK_MAX_BYTES (UINT64_C(1) << 40)
#define PACK_FILE_MODE 0666

int clops_cache_export(const clops_cache_config *cfg, const char *pack_path)
{
    clops_cache_file *files;
    size_t count;
    if (cfg->mode == CLOPS_CACHE_OFF || clops_cache_scan(cfg, &files, &count) != 0) return -1;
    clops_file_writer w;
    if (clops_file_begin(&w, pack_path, PACK_FILE_MODE) != 0) {
        free(files);
        return -1;
    }
    unsigned char head[PACK_HEADER_BYTES];
    memcpy(head, PACK_MAGIC, 8);
    clops_put_u64(head + 8, 0); /* entry count, patched below */
    clops_file_write(&w, head, sizeof head);
    int written = 0;
    for (size_t i = 0; !w.step && i < count; i++) {
        char path[CLOPS_CACHE_PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/%s", cfg->dir, files[i].name);
        unsigned char *data;
        size_t size;
        const unsigned char *k, *p;
        size_t klen, plen;
        if (clops_file_read(path, CLOPS_CACHE_ENTRY_MAX_BYTES, &data, &size) != 0) continue;
        if (clops_cache_entry_parse(data, size, &k, &klen, &p, &plen)) {
            unsigned char len[8];
            clops_put_u64(len, size);
            if (clops_file_write(&w, len, 8) == 0 && clops_file_write(&w, data, size) == 0) written++;
        }
        free(data);
    }
    free(files);
    clops_put_u64(head + 8, (uint64_t)written);
    clops_file_patch(&w, 0, head, sizeof head);
    return clops_file_commit(&w) == 0 ? written : -1;
}

/* Walks a pack's entries: with `install`, writes each; without, only checks them.
 * Returns the count, or -1 at the first malformed byte (trailing bytes too). */
static int pack_walk(const clops_cache_config *cfg, const unsigned char *data, size_t size, bool install)
{
    if (size < PACK_HEADER_BYTES || memcmp(data, PACK_MAGIC, 8) != 0) return -1;
    const uint64_t count = clops_get_u64(data + 8);
    size_t pos = PACK_HEADER_BYTES;
    int done = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (size - pos < 8) return -1;
        const uint64_t len = clops_get_u64(data + pos);
        pos += 8;
        const unsigned char *k, *p;
        size_t klen, plen;
        if (len > size - pos || !clops_cache_entry_parse(data + pos, (size_t)len, &k, &klen, &p, &plen)) return -1;
        if (install) {
            char path[CLOPS_CACHE_PATH_MAX + 32];
            clops_cache_entry_path(cfg, (const char *)k, klen, path, sizeof path);
            const void *const parts[1] = {data + pos};
            const size_t sizes[1] = {(size_t)len};
            if (clops_file_write_parts(path, CLOPS_CACHE_FILE_MODE, parts, sizes, 1, NULL) != 0) return -1;
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
    if (clops_file_read(pack_path, PACK_MAX_BYTES, &data, &size) != 0) return -1;
    /* The whole pack is checked before anything is installed: a bad pack installs nothing. */
    int imported = pack_walk(cfg, data, size, false);
    if (imported >= 0) imported = pack_walk(cfg, data, size, true);
    free(data);
    return imported;
}

/* Writes one pack entry (its length, then the entry file's bytes). */
static int write_entry(clops_file_writer *w, const void *const parts[3], const size_t sizes[3])
{
    unsigned char len[8];
    clops_put_u64(len, (uint64_t)sizes[0] + sizes[1] + sizes[2]);
    int rc = clops_file_write(w, len, 8);
    for (int i = 0; rc == 0 && i < 3; i++) rc = clops_file_write(w, parts[i], sizes[i]);
    return rc;
}

int clops_pack_add(const char *pack_path, const char *key, size_t key_len, const unsigned char *payload,
                   size_t payload_len, bool *bad_pack)
{
    *bad_pack = false;
    unsigned char *data = NULL;
    size_t size = 0;
    struct stat sb;
    if (stat(pack_path, &sb) == 0) { /* an existing pack: checked whole first, like an import */
        if (clops_file_read(pack_path, PACK_MAX_BYTES, &data, &size) != 0 || pack_walk(NULL, data, size, false) < 0) {
            free(data);
            *bad_pack = true;
            return -1;
        }
    }
    clops_file_writer w;
    if (clops_file_begin(&w, pack_path, PACK_FILE_MODE) != 0) {
        free(data);
        return -1;
    }
    unsigned char head[PACK_HEADER_BYTES];
    memcpy(head, PACK_MAGIC, 8);
    clops_put_u64(head + 8, 0); /* entry count, patched below */
    clops_file_write(&w, head, sizeof head);
    uint64_t kept = 0;
    const uint64_t count = data ? clops_get_u64(data + 8) : 0;
    for (size_t i = 0, pos = PACK_HEADER_BYTES; i < count; i++) { /* the old entries but one with this key */
        const size_t len = (size_t)clops_get_u64(data + pos);
        const unsigned char *k, *p;
        size_t klen, plen;
        clops_cache_entry_parse(data + pos + 8, len, &k, &klen, &p, &plen);
        if (klen != key_len || memcmp(k, key, key_len) != 0) {
            clops_file_write(&w, data + pos, 8 + len);
            kept++;
        }
        pos += 8 + len;
    }
    free(data);
    unsigned char header[CLOPS_CACHE_ENTRY_HEADER_BYTES];
    clops_cache_entry_header(header, (const unsigned char *)key, key_len, payload, payload_len);
    const void *const parts[3] = {header, key, payload};
    const size_t sizes[3] = {sizeof header, key_len, payload_len};
    write_entry(&w, parts, sizes);
    clops_put_u64(head + 8, kept + 1);
    clops_file_patch(&w, 0, head, sizeof head);
    return clops_file_commit(&w) == 0 ? (int)(kept + 1) : -1;
}

/* ---- public calls ------------------------------------------------------------------------- */

clops_status clops_cache_export_pack(const char *path, size_t *count)
{
    clops_cache_config cfg;
    if (!path) return clops_fail(CLOPS_ERROR_NULL_ARGUMENT, "clops_cache_export_pack: path is NULL");
    clops_status st = clops_cache_usable(&cfg, false);
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
    clops_status st = clops_cache_usable(&cfg, true);
    if (st != CLOPS_SUCCESS) return st;
    const int n = clops_cache_import(&cfg, path);
    if (n < 0)
        return clops_fail(CLOPS_ERROR_BAD_PACK, "%s is not a readable clops kernel pack (or %s is not writable)", path,
                          cfg.dir);
    if (count) *count = (size_t)n;
    return CLOPS_SUCCESS;
}
