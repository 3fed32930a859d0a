/* pack.h - what store/pack.c (kernel packs) and api/pack_import.c (loading their
 * entries in a child process before the import installs them) share. Internal. */
#ifndef CLOPS_STORE_PACK_H
#define CLOPS_STORE_PACK_H

#include <stddef.h>
#include <stdint.h>

/* What the import decided about one entry. */
enum {
    PACK_UNCHECKED = 0,
    PACK_LOADS = 'o',        /* built on its device: to install */
    PACK_DUPLICATE = 'u',    /* already in the cache, or earlier in the pack */
    PACK_OTHER_DEVICE = 'd', /* no device here has its identity */
    PACK_REFUSED = 'r',      /* the driver returned an error */
    PACK_CRASHED = 'c',      /* the child loading it died */
    PACK_HUNG = 'h',         /* the child loading it did not answer in time */
    PACK_OVER_LIMIT = 'l',   /* would not fit under CLOPS_CACHE_MAX_SIZE */
};

/* One entry of a pack: where its bytes are in the pack file. */
typedef struct pack_item {
    uint64_t offset, len;
    char name[24]; /* its cache file name */
    char verdict;
} pack_item;

/* Reads the framing of the pack open as `fd` (`size` bytes, at offset 0), entry by
 * entry, checking each entry's framing and checksum: the items (freed by the
 * caller), or -1 with `why` at the first malformed byte (trailing bytes too). */
int clops_pack_read_items(int fd, uint64_t size, pack_item **items, size_t *count, char *why, size_t why_size);

/* A loader: gives every PACK_UNCHECKED item of the pack open as `fd` its verdict
 * by loading it on its device. 0, or -1 if it could not run at all. */
typedef int (*clops_pack_loader)(int fd, pack_item *items, size_t count);

#endif
