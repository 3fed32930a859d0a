/* pack.h - what store/pack.c (kernel packs) and api/pack_import.c (loading their
 * entries in a child process before the import installs them) share. Internal. */
#ifndef CLOPS_STORE_PACK_H
#define CLOPS_STORE_PACK_H

#include <stddef.h>
#include <stdint.h>

/* What the import decided about one entry. */
enum {
    PACK_UNCHECKED = 0,
    PACK_TO_LOAD = 'm',      /* a device here has its identity: copied, then loaded */
    PACK_LOADS = 'o',        /* built on its device: to install */
    PACK_DUPLICATE = 'u',    /* already in the cache */
    PACK_IN_PACK = 'p',      /* its key is an earlier entry's of the same pack */
    PACK_OTHER_DEVICE = 'd', /* no device here has its identity */
    PACK_REFUSED = 'r',      /* the driver returned an error */
    PACK_CRASHED = 'c',      /* the child loading it died */
    PACK_HUNG = 'h',         /* the child loading it did not answer in time */
    PACK_NOT_TRIED = 'n',    /* not loaded: CLOPS_PACK_MAX_LOAD_FAILURES entries before it crashed or hung */
    PACK_OVER_LIMIT = 'l',   /* would not fit under CLOPS_CACHE_MAX_SIZE */
};

/* The import's budget for binaries that crash or hang the loader: after this
 * many such entries the rest are not tried (PACK_NOT_TRIED, rejected), so a
 * hostile pack costs at most this many child processes or load time limits. */
#define CLOPS_PACK_MAX_LOAD_FAILURES 4u

/* The most entries a pack may hold: import refuses a pack announcing more, and
 * export a cache holding more (docs/cache-and-tuning.md, "The cache under faults"). */
#define CLOPS_PACK_MAX_ENTRIES 65536u

/* One entry of a pack: where its bytes are (in the pack file, or in the import's
 * private copy of them) and what identifies them. */
typedef struct pack_item {
    uint64_t offset, len;
    uint64_t hash; /* of its key: the cache file name */
    uint64_t sum;  /* its checksum, as the first read found it */
    char name[24]; /* its cache file name */
    char verdict;
} pack_item;

/* Reads the framing of the pack open as `fd` (`size` bytes, at offset 0), entry by
 * entry, checking each entry's framing and checksum: the items (freed by the
 * caller), pointing into the pack, or -1 with `why` at the first malformed byte
 * (trailing bytes too) or at more than CLOPS_PACK_MAX_ENTRIES entries. Nothing
 * is written anywhere. */
int clops_pack_read_items(int fd, uint64_t size, pack_item **items, size_t *count, char *why, size_t why_size);

/* What a loader calls between sorting and loading (store/pack.c's pass 2):
 * decides which PACK_TO_LOAD items may be installed and copies them;
 * afterwards each PACK_TO_LOAD item is in the copy, at its offset. 0, or -1. */
typedef int (*clops_pack_prepare)(void *ctx, pack_item *items, size_t count);

/* A loader (api/pack_import.c), in child processes: sorts every PACK_UNCHECKED
 * item of the pack open as `pack_fd` by its key alone (no binary reaches a
 * driver) into PACK_OTHER_DEVICE or PACK_TO_LOAD; calls `prepare(ctx, ...)`
 * once, when every item is sorted; then loads every PACK_TO_LOAD item from the
 * copy open as `copy_fd` on its device and gives it its verdict. `opts`:
 * resolved options, read by the loader instead of the environment. 0; -1 if no
 * child could start; -2 if `prepare` failed. */
typedef int (*clops_pack_loader)(const void *opts, int pack_fd, int copy_fd, pack_item *items, size_t count,
                                 clops_pack_prepare prepare, void *ctx);

/* A test seam (CLOPS_TEST_HOOKS builds only): how many pairs of names the
 * import's duplicate check has compared on this thread. */
#ifdef CLOPS_TEST_HOOKS
extern _Thread_local unsigned long long clops_pack_name_compares;
#endif

#endif
