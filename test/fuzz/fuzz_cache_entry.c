/*
 * fuzz_cache_entry.c - the program cache's readers (lib/store/) on arbitrary
 * bytes, through the internal calls of the static clops_testable library.
 *
 * Input: one selector byte, then the file's bytes.
 *   selector bit 0 clear: the bytes become the entry file the lookup of a fixed
 *     key reads (named by the key's hash, as clops_cache_load expects), and
 *     clops_cache_load runs: it may hit only on an exactly framed entry of that
 *     key with the right checksum, and must then return exactly its payload; a
 *     torn or corrupt entry is a miss and is removed (read-write cache); a
 *     well-framed entry of another key (a hash collision) is a miss and stays.
 *   selector bit 0 set: the bytes are a kernel pack for the import's reader
 *     (clops_pack_read_items, read entry by entry): every entry it accepts lies
 *     inside the file, is whole, and the entries end exactly at the file's end.
 *   Then clops_cache_list visits whatever is in the directory, and the
 *   directory is emptied for the next input.
 */
#define _XOPEN_SOURCE 700
#include "fuzz_common.h"

#include <sys/stat.h>

#include "store/cache.h"
#include "store/file.h"
#include "store/pack.h"

#define FUZZ_KEY "clops-cache-format 1\nclops fuzz\ndevice: fuzz\noptions: -DFUZZ\nsource:\nkernel void k(void) {}\n"

static clops_cache_config cfg;
static char entry_file[CLOPS_CACHE_PATH_MAX + 64], pack_file[600], export_file[600];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = CLOPS_CACHE_READ_WRITE;
    cfg.max_bytes = CLOPS_CACHE_DEFAULT_MAX_BYTES;
    snprintf(cfg.dir, sizeof cfg.dir, "%s/cache", fz_tmpdir());
    if (mkdir(cfg.dir, 0700) != 0)
        abort();
    snprintf(entry_file, sizeof entry_file, "%s/%016llx.bin", cfg.dir,
             (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, FUZZ_KEY, strlen(FUZZ_KEY)));
    snprintf(pack_file, sizeof pack_file, "%s/in.pack", fz_tmpdir());
    snprintf(export_file, sizeof export_file, "%s/out.pack", fz_tmpdir());
    return 0;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

typedef struct visit_state {
    int entries, valid;
} visit_state;

static void visit(void *user, const char *file, uint64_t bytes, long long mtime, const char *key, size_t key_len)
{
    visit_state *v = user;
    (void)mtime;
    if (!file || strlen(file) != 20)
        abort();
    v->entries++;
    if (key) {
        v->valid++;
        volatile char sink = 0;
        for (size_t i = 0; i < key_len; i++) /* the whole key is readable */
            sink ^= key[i];
        (void)sink;
        if (key_len + 32 > bytes)
            abort();
    }
}

/* Whether `d` is a well-framed entry (magic, version, lengths, checksum) of any
 * key; if it is the entry of FUZZ_KEY, *payload and *plen are its payload. */
static int framed_entry(const uint8_t *d, size_t n, int *ours, const uint8_t **payload, size_t *plen)
{
    *ours = 0;
    if (n < 32 || memcmp(d, "CLOPSBIN", 8) != 0 || d[8] != 1 || d[9] || d[10] || d[11])
        return 0;
    const uint64_t k = (uint64_t)d[12] | (uint64_t)d[13] << 8 | (uint64_t)d[14] << 16 | (uint64_t)d[15] << 24;
    const uint64_t p = get_u64(d + 16), sum = get_u64(d + 24);
    if (k > n || p > n || 32 + k + p != n)
        return 0;
    if (clops_fnv1a(clops_fnv1a(CLOPS_FNV_SEED, d + 32, (size_t)k), d + 32 + k, (size_t)p) != sum)
        return 0;
    const size_t klen = strlen(FUZZ_KEY);
    *ours = k == klen && memcmp(d + 32, FUZZ_KEY, klen) == 0;
    *payload = d + 32 + k;
    *plen = (size_t)p;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t sel = data[0];
    data++, size--;
    if (!(sel & 1)) {
        fz_write_file(entry_file, data, size);
        unsigned char *payload = NULL;
        size_t plen = 0;
        const bool hit = clops_cache_load(&cfg, FUZZ_KEY, strlen(FUZZ_KEY), &payload, &plen);
        const uint8_t *want = NULL;
        size_t want_len = 0;
        int ours = 0;
        const int framed = framed_entry(data, size, &ours, &want, &want_len);
        if (hit != (framed && ours))
            abort(); /* a hit must be exactly a well-framed entry of this key */
        if (hit && (plen != want_len || (plen && memcmp(payload, want, plen) != 0)))
            abort();
        struct stat st;
        const int kept = stat(entry_file, &st) == 0;
        if (kept != framed)
            abort(); /* a torn or corrupt entry is removed; another key's (a hash collision) is kept */
        free(payload);
    } else {
        /* The pack reader of the import (pack.c), without its load check (a child
         * process per input): every entry it accepts lies inside the file and is
         * whole, and the accepted entries end exactly at the file's end. */
        fz_write_file(pack_file, data, size);
        int fd;
        uint64_t fsize;
        pack_item *items = NULL;
        size_t n = 0;
        char why[256];
        if (clops_file_open(pack_file, UINT64_C(1) << 40, &fd, &fsize) != 0)
            abort();
        if (clops_pack_read_items(fd, fsize, -1, &items, &n, why, sizeof why) == 0) {
            uint64_t end = 16;
            for (size_t i = 0; i < n; i++) {
                if (items[i].offset != end + 8 || items[i].len > fsize - items[i].offset)
                    abort();
                const unsigned char *k, *p;
                size_t klen, plen;
                if (!clops_cache_entry_parse(data + items[i].offset, (size_t)items[i].len, &k, &klen, &p, &plen))
                    abort(); /* an accepted entry is whole */
                end = items[i].offset + items[i].len;
            }
            if (end != fsize)
                abort();
        }
        free(items);
        close(fd);
        (void)export_file;
    }
    visit_state v = {0, 0};
    clops_cache_list(&cfg, visit, &v);
    clops_cache_prune_to(&cfg, 0); /* empty for the next input */
    return 0;
}
