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

/* The most entries a pack may hold: import refuses a pack announcing more, and
 * export a cache holding more (README, "The cache under faults"). */
#define CLOPS_PACK_MAX_ENTRIES 65536u

/* One entry of a pack: where its bytes are (in the pack file, or in the import's
 * private copy of them). */
typedef struct pack_item {
    uint64_t offset, len;
    uint64_t hash; /* of its key: the cache file name */
    char name[24]; /* its cache file name */
    char verdict;
} pack_item;

/* Reads the framing of the pack open as `fd` (`size` bytes, at offset 0), entry by
 * entry, checking each entry's framing and checksum: the items (freed by the
 * caller), or -1 with `why` at the first malformed byte (trailing bytes too) or
 * at more than CLOPS_PACK_MAX_ENTRIES entries. With `copy` >= 0, each entry's
 * bytes, as they were checked, are also appended to the file open as `copy`
 * (from its offset 0) and the items point there instead of into the pack;
 * -2 with `why` (errno set) if writing the copy failed. */
int clops_pack_read_items(int fd, uint64_t size, int copy, pack_item **items, size_t *count, char *why,
                          size_t why_size);

/* A loader: gives every PACK_UNCHECKED item of the pack entries open as `fd` its
 * verdict by loading it on its device, with `opts` (resolved options, read by
 * the loader instead of the environment). 0, or -1 if it could not run at all. */
typedef int (*clops_pack_loader)(const void *opts, int fd, pack_item *items, size_t count);

/* A test seam (CLOPS_TEST_HOOKS builds only): how many pairs of names the
 * import's duplicate check has compared on this thread. */
#ifdef CLOPS_TEST_HOOKS
extern _Thread_local unsigned long long clops_pack_name_compares;
#endif

#endif
