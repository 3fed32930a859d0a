/*
 * fuzz_common.h - what the libFuzzer targets of test/fuzz share: a reader that
 * takes typed values off the fuzzer's bytes (zeros once they run out), and
 * temporary paths. Header only; each target includes it once, after defining
 * _XOPEN_SOURCE 700 (nftw, for tc_rm_rf of test_fs.h).
 */
#ifndef CLOPS_FUZZ_COMMON_H
#define CLOPS_FUZZ_COMMON_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

typedef struct fz_reader {
    const uint8_t *p;
    size_t n;
} fz_reader;

static inline uint64_t fz_bytes(fz_reader *r, unsigned k)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < k; i++) {
        uint8_t b = 0;
        if (r->n) {
            b = *r->p++;
            r->n--;
        }
        v |= (uint64_t)b << (8 * i);
    }
    return v;
}

static inline uint8_t fz_u8(fz_reader *r)
{
    return (uint8_t)fz_bytes(r, 1);
}

static inline uint32_t fz_u32(fz_reader *r)
{
    return (uint32_t)fz_bytes(r, 4);
}

static inline uint64_t fz_u64(fz_reader *r)
{
    return fz_bytes(r, 8);
}

static char fz_dir[256];

static inline void fz_cleanup(void)
{
    if (fz_dir[0])
        tc_rm_rf(fz_dir);
}

/* A directory of our own under $TMPDIR (or /tmp), made once per process and
 * removed at exit. */
static inline const char *fz_tmpdir(void)
{
    char *dir = fz_dir;
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof fz_dir, "%s/clops-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(fz_cleanup);
    }
    return dir;
}

/* Writes `size` bytes to `path` (truncating); aborts on failure: the harness, not the target. */
static inline void fz_write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

#endif /* CLOPS_FUZZ_COMMON_H */
