/* tune_db.c - the per-device tuning database (the tuner, lib/tune.c, fills it).
 *
 * The database is a text file per device beside the program cache,
 * "tune-<hash of the device identity>.txt":
 *     clops-tune 1
 *     device <device name>
 *     <kernel> <variant options>\t<chunk>\t<l0>,<l1>,<l2>\t<GB/s>\t<default GB/s>\t<loop>\t<vector bytes>
 * one line per kernel variant (the build options other than CHUNK, VEC, ROWS and VW);
 * a file named by the tuning_db option may be shared by several devices (N18):
 * then it is "clops-tune-shared 1" followed by one "device" section per device
 * (readers of version 1 ignore it), and a writer keeps the other devices'
 * sections as they are; a file of one device stays version 1;
 * <loop> is 0 (the default), 1 (element loop), 2 (explicit vectors) or 3
 * (local-memory tile), and a line without it (written before it existed) means 0;
 * <vector bytes> is the vector-rows kernels' bytes per vector (VW x element
 * size), 0 where they do not run or a line without it (written before it
 * existed): the device class's (cl/params.c); else a power of two from 2 to 128
 * (one a variant's elements cannot take, as 2 bytes of 4-byte elements, leaves
 * the class's width; any other value refuses the line). Fields after the ones a
 * version knows are ignored: an older clops reading this file uses a line's
 * chunk, local size and loop at its class's vector width (the results stay
 * bit-exact), and an older tuner recording into it rewrites this device's lines
 * without the vector bytes (the other devices' sections stay as they are). It is
 * written with the store's atomic writer (file.h), like cache entries. Lookup order:
 * this device's entry, else the heuristic (scheduler.c). A context whose tuning
 * is off (CLOPS_TUNE=off) ignores the file; one with a tuning_db option uses that
 * file instead. Lines may end in "\r\n". A file with another version, device or
 * malformed lines is ignored line by line, never trusted. A file that exists
 * but is not a database this version knows (its first line neither magic above,
 * e.g. a user's text file or a newer format) or that cannot be read is never
 * written (R3): lookups ignore it, and recording into it fails with
 * CLOPS_ERROR_CACHE_IO naming it, the file left as it was; only a missing file
 * (or an empty one: nothing to lose) is created. Writers record one
 * result at a time under a lock (clops_tuning_record: lock, re-read, merge,
 * write, unlock), so tuners running at once on one database keep each other's
 * results; the lock is a file beside the database ("lock-tune-<hash>" in the
 * cache directory, "<tuning_db>.lock" beside a tuning_db). Inside the cache
 * directory no symbolic link is followed (N3): the database is read with
 * O_NOFOLLOW and replaced (CLOPS_FILE_IN_CACHE), the lock opened O_NOFOLLOW. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* O_NOFOLLOW, lstat */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "store/file.h"
#include "store/tune_db.h"

#define TUNE_MAGIC "clops-tune 1"
#define TUNE_MAGIC_SECTIONS "clops-tune-shared 1" /* a tuning_db shared by several devices */
#define TUNE_MAX_BYTES (16u << 20) /* a few hundred lines are expected */

/* The context's tuning database: the file its options name, else the device's
 * beside the cache; false if the path does not fit. */
static bool db_path(const clops_context *ctx, char *out, size_t size)
{
    if (ctx->tuning_db) return snprintf(out, size, "%s", ctx->tuning_db) < (int)size;
    return snprintf(out, size, "%s/tune-%016llx.txt", ctx->cache.dir,
                    (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, ctx->identity, strlen(ctx->identity))) < (int)size;
}

/* The lock beside the database: "<tuning_db>.lock", or "lock-tune-<hash>" in the cache directory. */
static bool lock_path(const clops_context *ctx, char *out, size_t size)
{
    if (ctx->tuning_db) return snprintf(out, size, "%s.lock", ctx->tuning_db) < (int)size;
    return snprintf(out, size, "%s/" CLOPS_TUNE_LOCK_PREFIX "%016llx", ctx->cache.dir,
                    (unsigned long long)clops_fnv1a(CLOPS_FNV_SEED, ctx->identity, strlen(ctx->identity))) < (int)size;
}

/* How the database is opened: a tuning_db is the user's to name (a link is
 * followed); a file in the cache directory is the cache's own (never followed). */
static unsigned db_flags(const clops_context *ctx)
{
    return ctx->tuning_db ? 0u : CLOPS_FILE_IN_CACHE;
}

bool clops_tuning_table_put(struct clops_tuning_table *t, const clops_tuning_entry *e)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->entries[i].key, e->key) == 0) {
            t->entries[i] = *e;
            return true;
        }
    if (t->count == t->cap) {
        const size_t cap = t->cap ? 2 * t->cap : 32;
        clops_tuning_entry *grown = realloc(t->entries, cap * sizeof *grown);
        if (!grown) return false;
        t->entries = grown;
        t->cap = cap;
    }
    t->entries[t->count++] = *e;
    return true;
}

void clops_tuning_table_remove(struct clops_tuning_table *t, const char *key)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->entries[i].key, key) == 0) {
            t->entries[i] = t->entries[--t->count];
            return;
        }
}

/* Parses "<key>\t<chunk>\t<l0>,<l1>,<l2>\t<gbps>\t<default>[\t<loop>[\t<vector bytes>]]" (fields
 * after those are a later version's, ignored); false if malformed. */
static bool parse_line(char *line, clops_tuning_entry *e)
{
    char *fields[7];
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(line, "\t\n", &save); tok && n < 7; tok = strtok_r(NULL, "\t\n", &save))
        fields[n++] = tok;
    if (n < 5 || strlen(fields[0]) >= sizeof e->key) return false;
    unsigned long long chunk, l[3];
    int used = 0;
    if (sscanf(fields[1], "%llu%n", &chunk, &used) != 1 || fields[1][used] || chunk == 0 || chunk > 65536) return false;
    if (sscanf(fields[2], "%llu,%llu,%llu%n", &l[0], &l[1], &l[2], &used) != 3 || fields[2][used]) return false;
    for (int d = 0; d < 3; d++)
        if (l[d] == 0 || l[d] > 65536) return false;
    unsigned loop = CLOPS_LOOP_DEFAULT;
    if (n >= 6 && (sscanf(fields[5], "%u%n", &loop, &used) != 1 || fields[5][used] || loop > CLOPS_LOOP_TILE))
        return false;
    unsigned vb = 0; /* vector bytes: 0, or a power of two from 2 to 128, in at most 3 digits */
    if (n == 7) {
        const size_t len = strlen(fields[6]);
        if (len > 3 || strspn(fields[6], "0123456789") != len) return false;
        vb = (unsigned)atoi(fields[6]);
        if (vb == 1 || vb > 128 || (vb & (vb - 1)) != 0) return false;
    }
    snprintf(e->key, sizeof e->key, "%s", fields[0]);
    e->value.chunk = (unsigned)chunk;
    e->value.loop = (clops_loop)loop;
    e->value.vector_bytes = vb;
    for (int d = 0; d < 3; d++) e->value.local[d] = (size_t)l[d];
    e->gbps = strtod(fields[3], NULL);
    e->default_gbps = strtod(fields[4], NULL);
    return true;
}

/* The other devices' sections of a database, as they were. */
typedef struct other_sections {
    char *text;
    size_t len;
} other_sections;

/* What read_db found. */
typedef enum {
    DB_READ,       /* a database of this version (or an empty file) */
    DB_MISSING,    /* no file (in the cache directory: a link in its place, replaced, never followed) */
    DB_FOREIGN,    /* a file that is not a database this version knows: never written */
    DB_UNREADABLE, /* a file that cannot be read (its errno in `*err`): never written */
    DB_NO_MEMORY,
} db_read;

/* Reads the context's database at `path`: this device's entries into `t` (if
 * not NULL), the other devices' sections, line for line, into `others` (if not
 * NULL), and, for DB_FOREIGN, its first line (printable characters, cut) into
 * `first` (if not NULL). Lines may end in "\r\n" (a file edited on Windows reads
 * the same). */
static db_read read_db(const clops_context *ctx, const char *path, struct clops_tuning_table *t,
                       other_sections *others, int *err, char *first, size_t first_size)
{
    unsigned char *data;
    size_t size;
    if (clops_file_read_flags(path, TUNE_MAX_BYTES, db_flags(ctx), &data, &size) != 0) {
        *err = errno;
        if (errno == ENOENT || (errno == ELOOP && (db_flags(ctx) & CLOPS_FILE_IN_CACHE))) return DB_MISSING;
        return errno == ENOMEM ? DB_NO_MEMORY : DB_UNREADABLE;
    }
    char *text = realloc(data, size + 1), *save = NULL;
    if (!text) {
        free(data);
        return DB_NO_MEMORY;
    }
    text[size] = '\0';
    if (others && !(others->text = malloc(size + 2))) {
        free(text);
        return DB_NO_MEMORY;
    }
    bool ok = true, mine = false, known = false;
    char *line = strtok_r(text, "\n", &save);
    if (line) line[strcspn(line, "\r")] = '\0';
    const bool sections = line && strcmp(line, TUNE_MAGIC_SECTIONS) == 0;
    if (size > 0 && (!line || (strcmp(line, TUNE_MAGIC) != 0 && !sections))) { /* not ours: never trusted */
        size_t n = 0;
        for (const char *c = line ? line : ""; first && *c && n + 1 < first_size && n < 48; c++)
            if (*c >= ' ' && *c < 127) first[n++] = *c;
        if (first && first_size) first[n] = '\0';
        free(text);
        return DB_FOREIGN;
    }
    while (ok && line && (line = strtok_r(NULL, "\n", &save)) != NULL) {
        line[strcspn(line, "\r")] = '\0';
        if (strncmp(line, "device ", 7) == 0) {
            if (!sections && known) break; /* version 1: one device */
            known = true;
            mine = strcmp(line + 7, ctx->info.device_name) == 0;
        }
        clops_tuning_entry e;
        if (mine && t && strncmp(line, "device ", 7) != 0 && parse_line(line, &e)) ok = clops_tuning_table_put(t, &e);
        if (!mine && known && others) {
            const size_t n = strlen(line);
            memcpy(others->text + others->len, line, n);
            others->text[others->len + n] = '\n';
            others->len += n + 1;
        }
    }
    free(text);
    return ok ? DB_READ : DB_NO_MEMORY;
}

/* Whether the database at `path` may be written: CLOPS_SUCCESS for a missing
 * file or one of this version (then, with `others`, its other devices'
 * sections), else a failure naming the file, which is left as it is. */
static clops_status db_writable(const clops_context *ctx, const char *path, other_sections *others)
{
    int err = 0;
    char first[64] = "";
    switch (read_db(ctx, path, NULL, others, &err, first, sizeof first)) {
    case DB_READ:
    case DB_MISSING: return CLOPS_SUCCESS;
    case DB_NO_MEMORY: return clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "tuning database %s", path);
    case DB_UNREADABLE:
        return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot read the tuning database %s (%s): it is not replaced",
                          path, err == EINVAL ? "not a regular file" : err == EFBIG ? "larger than 16 MiB" : strerror(err));
    case DB_FOREIGN: break;
    }
    if (strncmp(first, "clops-tune", 10) == 0)
        return clops_fail(CLOPS_ERROR_CACHE_IO,
                          "the tuning database %s has the format \"%s\", which this version of clops does not know "
                          "(it writes \"" TUNE_MAGIC "\" or \"" TUNE_MAGIC_SECTIONS "\"): it is not replaced; "
                          "name another file", path, first);
    return clops_fail(CLOPS_ERROR_CACHE_IO,
                      "%s is not a clops tuning database (its first line is not \"" TUNE_MAGIC "\"): it is not "
                      "replaced; name a missing file or a tuning database", path);
}

struct clops_tuning_table *clops_tuning_table_load(const clops_context *ctx)
{
    struct clops_tuning_table *t = calloc(1, sizeof *t);
    if (!t || (ctx->cache.mode == CLOPS_CACHE_OFF && !ctx->tuning_db)) return t;
    char path[CLOPS_FILE_PATH_MAX];
    int err;
    /* A missing, unreadable or foreign file reads as empty (the heuristic applies). */
    if (db_path(ctx, path, sizeof path) && read_db(ctx, path, t, NULL, &err, NULL, 0) == DB_NO_MEMORY) {
        clops_tuning_table_free(t);
        return NULL;
    }
    return t;
}

bool clops_tuning_lookup(clops_context *ctx, const char *key, clops_tuning *out)
{
    if (!ctx->options.tuning || ctx->backend != CLOPS_BACKEND_OPENCL) return false;
    bool found = false;
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->tuning) ctx->tuning = clops_tuning_table_load(ctx);
    for (size_t i = 0; ctx->tuning && i < ctx->tuning->count; i++)
        if (strcmp(ctx->tuning->entries[i].key, key) == 0) {
            *out = ctx->tuning->entries[i].value;
            found = true;
            break;
        }
    pthread_mutex_unlock(&ctx->lock);
    return found;
}

void clops_tuning_table_free(struct clops_tuning_table *t)
{
    if (t) free(t->entries);
    free(t);
}

void clops_tuning_release(clops_context *ctx)
{
    clops_tuning_table_free(ctx->tuning);
    ctx->tuning = NULL;
}

clops_status clops_tuning_table_save(const clops_context *ctx, const struct clops_tuning_table *t)
{
    if (ctx->cache.mode != CLOPS_CACHE_READ_WRITE && !ctx->tuning_db)
        return clops_fail(CLOPS_ERROR_CACHE_UNAVAILABLE, "cannot store tuning results: program cache %s",
                          ctx->cache.status);
    char path[CLOPS_FILE_PATH_MAX];
    if (!db_path(ctx, path, sizeof path))
        return clops_fail(CLOPS_ERROR_CACHE_IO, "the tuning database's path is longer than %d bytes",
                          CLOPS_FILE_PATH_MAX - 1);
    other_sections others = {NULL, 0};
    const clops_status st = db_writable(ctx, path, &others); /* a file not ours is never replaced */
    if (st != CLOPS_SUCCESS) {
        free(others.text);
        return st;
    }
    clops_file_writer w;
    char why[CLOPS_FILE_PATH_MAX + 128];
    if (clops_file_begin(&w, path, CLOPS_CACHE_FILE_MODE, db_flags(ctx)) == 0) {
        clops_file_printf(&w, "%s\ndevice %s\n", others.len ? TUNE_MAGIC_SECTIONS : TUNE_MAGIC,
                          ctx->info.device_name);
        for (size_t i = 0; i < t->count; i++) {
            const clops_tuning_entry *e = &t->entries[i];
            clops_file_printf(&w, "%s\t%u\t%zu,%zu,%zu\t%.3f\t%.3f\t%u\t%u\n", e->key, e->value.chunk,
                              e->value.local[0], e->value.local[1], e->value.local[2], e->gbps, e->default_gbps,
                              (unsigned)e->value.loop, e->value.vector_bytes);
        }
        clops_file_write(&w, others.text, others.len); /* the other devices' sections, as they were */
        clops_file_commit(&w);
    }
    free(others.text);
    if (!w.step) return CLOPS_SUCCESS;
    clops_file_describe(&w, why, sizeof why);
    return clops_fail(CLOPS_ERROR_CACHE_IO, "cannot write the tuning database %s: %s", path, why);
}

/* Writers of tuning databases in this process: fcntl locks exclude other
 * processes only, so threads of one process also take this mutex. */
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

clops_status clops_tuning_record(const clops_context *ctx, const clops_tuning_entry *e, bool keep)
{
    if (ctx->cache.mode != CLOPS_CACHE_READ_WRITE && !ctx->tuning_db)
        return clops_fail(CLOPS_ERROR_CACHE_UNAVAILABLE, "cannot store tuning results: program cache %s",
                          ctx->cache.status);
    /* The lock is a file of its own beside the database (the database is
     * replaced by rename and so cannot hold it): processes that share the
     * database share the lock, whatever their cache directories (N18). */
    char path[CLOPS_FILE_PATH_MAX];
    if (!lock_path(ctx, path, sizeof path))
        return clops_fail(CLOPS_ERROR_CACHE_IO, "the tuning database's path is longer than %d bytes",
                          CLOPS_FILE_PATH_MAX - 8);
    clops_file_lock lock;
    clops_status st = clops_file_lock_take(&lock, path, &record_lock) == 0
                          ? CLOPS_SUCCESS
                          : clops_fail(CLOPS_ERROR_CACHE_IO, "cannot lock the tuning database (%s): %s", path,
                                       strerror(errno));
    struct clops_tuning_table *t = st == CLOPS_SUCCESS ? clops_tuning_table_load(ctx) : NULL;
    if (st == CLOPS_SUCCESS && !t) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "tuning table");
    if (st == CLOPS_SUCCESS) {
        if (!keep) clops_tuning_table_remove(t, e->key);
        else if (!clops_tuning_table_put(t, e)) st = clops_fail(CLOPS_ERROR_OUT_OF_HOST_MEMORY, "tuning table");
    }
    if (st == CLOPS_SUCCESS) st = clops_tuning_table_save(ctx, t);
    clops_tuning_table_free(t);
    clops_file_lock_release(&lock, path, false); /* the lock file stays: cache clear removes it */
    return st;
}

/* Removes the tuner's lock files that no process holds: each is removed only while
 * this process holds its lock (and no thread of it is recording: fcntl locks
 * belong to the process), and a tuner that locked a file removed meanwhile takes
 * a new one (clops_file_lock_take), so two tuners never write at once. */
void clops_tuning_locks_remove(const clops_cache_config *cfg)
{
    DIR *d = opendir(cfg->dir);
    if (!d) return;
    const size_t prefix = strlen(CLOPS_TUNE_LOCK_PREFIX);
    for (struct dirent *e; (e = readdir(d));) {
        if (strlen(e->d_name) != prefix + 16 || strncmp(e->d_name, CLOPS_TUNE_LOCK_PREFIX, prefix) != 0 ||
            strspn(e->d_name + prefix, "0123456789abcdef") != 16)
            continue;
        char path[CLOPS_CACHE_PATH_MAX + 64];
        if (snprintf(path, sizeof path, "%s/%s", cfg->dir, e->d_name) >= (int)sizeof path) continue;
        clops_file_lock_remove_unheld(path, &record_lock);
    }
    closedir(d);
}

clops_status clops_tuning_db_check(const clops_context *ctx)
{
    char path[CLOPS_FILE_PATH_MAX];
    if (!db_path(ctx, path, sizeof path))
        return clops_fail(CLOPS_ERROR_CACHE_IO, "the tuning database's path is longer than %d bytes",
                          CLOPS_FILE_PATH_MAX - 1);
    return db_writable(ctx, path, NULL);
}

void clops_tuning_db_file(const clops_context *ctx, char *out, size_t size)
{
    db_path(ctx, out, size);
}
