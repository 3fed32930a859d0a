/* cache_fixture.h - what the program cache suites (test_cache, test_cache_maint,
 * test_tuning) share: a fresh cache directory and environment per test, contexts
 * freed by the teardown, the directory's files by name, what
 * clops_cache_list_entries() reads back, and five operator cases with the checks
 * of which path each took and of its results.
 *
 * The suites link clops_testable (the static build): files are crafted with the
 * cache's own internals (store/cache.h) where a test needs an entry that only a
 * bug or another identity could produce, and file-system calls are made to fail
 * through the clops_cl seam (cl_api.h). Everything else goes through the public
 * API, and every behaviour is asserted by value: the program_origin an operator
 * reports ("compiled", "disk cache", "in-process"), the files left in the
 * directory, the keys clops_cache_list_entries() reads back, and bit-exact
 * results of execute_host and of execute on cl_mem against the naive reference.
 *
 * Each test runs in a fresh temporary cache directory (CLOPS_CACHE_DIR, which
 * contexts read at creation). The checked fixture's teardown runs also after a
 * failed assertion (CK_NOFORK): it restores the seam (clops_cl = clops_cl_real)
 * and every environment variable a test changed, frees the test's contexts and
 * removes the directory. */
#ifndef CLOPS_TEST_CACHE_FIXTURE_H
#define CLOPS_TEST_CACHE_FIXTURE_H

#include <limits.h>
#include <sys/types.h>
#include <time.h>

#include "fixture.h"
#include "test_common.h"

#define CLOPS_CL_API_NO_MACROS
#include "ops/ops.h" /* the operator object: test_tuning reads its tune key */

#define ENTRY_HEADER_BYTES 32 /* magic, version, key length, payload length, checksum */

extern char g_root[PATH_MAX];     /* the test's temporary directory */
extern char g_dir[PATH_MAX + 32]; /* g_root/cache: CLOPS_CACHE_DIR */
#define MAX_CTX 8
extern clops_context *g_ctx[MAX_CTX];

/* The checked fixture of every test case. */
void setup(void);
void teardown(void);
/* A context on the default device, freed by the teardown if the test does not. */
clops_context *new_ctx(void);
/* A context whose tuning_db option names `db` and whose cache is `cache_dir`, freed by the teardown. */
clops_context *ctx_with_db(const char *db, const char *cache_dir);
void drop_ctx(clops_context *c);

/* ---- files ---- */
unsigned char *read_all(const char *path, size_t *len);
void write_all(const char *path, const void *data, size_t len);
int exists(const char *path);
/* "<g_dir>/<name>" */
void entry_file(const char *name, char *out, size_t size);
/* "<g_dir>/tune-<hash of the context's identity>.txt": the context's tuning database. */
void tune_file_path(const clops_context *ctx, char *out, size_t size);
/* Temporary files (".tmp-*") in `dir`: their count, and the first `max` names. */
int temps_in(const char *dir, char names[][32], int max);
/* Sets a file's modification time (the cache's "last used") to `age` seconds ago. */
void age_file(const char *path, long age);
struct timespec mtime_of(const char *path);

/* What the cache directory holds, by file name. */
typedef struct dir_scan {
    int present;          /* the directory exists */
    int entries;          /* <16 hex>.bin */
    int temps;            /* .tmp-* (entries being written) and .tune-* */
    int tunes;            /* tune-*.txt */
    char entry[32][24];
    uint64_t entry_bytes[32];
    char tune[64];
} dir_scan;
int is_entry_name(const char *n);
dir_scan scan_dir(void);
int scan_has(const dir_scan *s, const char *name);
/* The entry that `after` has and `before` lacks (exactly one). */
void new_entry(const dir_scan *before, const dir_scan *after, char *name, size_t size, uint64_t *bytes);

/* What clops_cache_list_entries() reads back. */
typedef struct listing {
    size_t n, invalid, misnamed;
    char file[32][24];
    char *key[32];
    size_t key_len[32];
    uint64_t bytes[32];
} listing;
/* clops_cache_list_entries' callback filling a listing. */
void list_cb(void *user, const char *file, uint64_t bytes, long long last_used, const char *key, size_t key_len);
void list_entries(listing *l);
void listing_free(listing *l);
const char *listed_key(const listing *l, const char *file, size_t *len);
/* clops_cache_list_entries() visits `n` files, of which `invalid` do not parse
 * and `misnamed` parse but are not named after their key's hash. */
void expect_listing(size_t n, size_t invalid, size_t misnamed, const char *label);
/* The directory holds exactly `want` entries, each of which parses (key read
 * back), is named after its key's hash, and no temporary file is left. */
void expect_clean_cache(int want, const char *label);

/* Writes `v` as `n` little-endian bytes (crafting entry and pack headers). */
void put_le(unsigned char *p, uint64_t v, int n);

/* ---- operator cases ---- */
/* Four cases, each its own program, and the variant clops_tune(quick) tunes. */
extern const tc_case CASE_A, CASE_B, CASE_C, CASE_D, CASE_T;
void prepare_ok(tc_prepared *p, const tc_case *d);
/* Creates the case's operator and reads its info. */
clops_operator *create_op(clops_context *ctx, tc_prepared *p, clops_operator_info *info, const char *label);
/* Which path ran: backend, and for OpenCL the program's origin (NULL: any). */
void expect_path(const tc_prepared *p, const clops_operator_info *info, clops_backend backend, const char *origin,
                 const char *label);
/* execute_host and execute on cl_mem (wait list, returned event), both bit-exact. */
void run_and_compare(clops_context *ctx, clops_operator *op, tc_prepared *p, const char *label);
/* Creates the case on ctx, checks the path it took and its results. */
void check_case(clops_context *ctx, const tc_case *d, clops_backend backend, const char *origin, const char *label);
/* check_case on the OpenCL backend of a new context, freed afterwards. */
void check_fresh(const tc_case *d, const char *origin, const char *label);

/* The directory entry a case's program is stored in. */
typedef struct built_entry {
    char name[32];            /* <16 hex>.bin */
    char path[PATH_MAX + 64]; /* entry_file(name) */
    uint64_t bytes;           /* its size on disk */
} built_entry;
/* Builds the case on a fresh context (it must compile) and finds its entry as
 * the one new file. */
built_entry build_entry(const tc_case *d, const char *label);

/* "<g_root>/kernels.pack" */
void pack_path(char *out, size_t size);
/* A pack call (clops_cache_export_pack or clops_cache_import_pack) on `path`
 * that must succeed with `want` entries. */
void expect_pack_call(clops_status (*call)(const char *, size_t *), const char *path, size_t want, const char *label);
/* Warms CASE_A and CASE_D, exports them to pack_path() (names: their entry
 * files), and clears the directory. */
void make_pack(char names[2][32]);

/* ---- faults injected through the clops_cl seam ---- */
/* Calls the counting faults have seen; a test sets it to 0 before installing one. */
extern int g_calls;
/* io_write: the disk is full. */
ssize_t write_enospc(int fd, const void *buf, size_t n);
/* io_write: the first call writes half its bytes, then the disk is full (counts). */
ssize_t write_half_then_enospc(int fd, const void *buf, size_t n);

/* In a forked child: fail the child (exit 1) with a message on stderr unless `cond`;
 * the parent's waitpid check reports it. */
#define CHILD_CHECK(cond, ...)                                                                                   \
    do {                                                                                                         \
        if (!(cond)) {                                                                                           \
            fprintf(stderr, __VA_ARGS__);                                                                        \
            fputc('\n', stderr);                                                                                 \
            _exit(1);                                                                                            \
        }                                                                                                        \
    } while (0)

/* Runs suite `s` (no fork) unless there is no OpenCL device: then exits 77
 * (skipped), or fails under CLOPS_REQUIRE_DEVICE=1. */
int cache_suite_main(Suite *s);
/* A test case of `s` with this fixture's setup and teardown. */
TCase *cache_case(Suite *s, const char *name);

#endif
