/* tune_db.h - the per-device tuning database (tune_db.c), read by the operators'
 * plans through clops_tuning_lookup (internal.h) and written by the tuner. Internal. */
#ifndef CLOPS_TUNE_DB_H
#define CLOPS_TUNE_DB_H

#include "internal.h"

/* One kernel variant's winner and what it measured. */
typedef struct clops_tuning_entry {
    char key[CLOPS_OPTIONS_MAX];
    clops_tuning value;
    double gbps, default_gbps;
} clops_tuning_entry;

struct clops_tuning_table {
    clops_tuning_entry *entries;
    size_t count, cap;
};

/* The context's device's table from its file (empty if there is none or the
 * cache is off); NULL only when out of memory. */
struct clops_tuning_table *clops_tuning_table_load(const clops_context *ctx);
/* Adds or replaces the entry for `e->key`; false when out of memory. */
bool clops_tuning_table_put(struct clops_tuning_table *t, const clops_tuning_entry *e);
/* Drops `key` from the table (a variant whose earlier winner no longer wins). */
void clops_tuning_table_remove(struct clops_tuning_table *t, const char *key);
/* One result into the device's file: with `keep` adds or replaces e->key's
 * entry, without it removes that key; under a lock on the file (other processes
 * and threads wait), re-read first, so concurrent writers keep each other's
 * entries; written atomically. */
clops_status clops_tuning_record(const clops_context *ctx, const clops_tuning_entry *e, bool keep);
/* Writes the table as the device's file, atomically; an existing file that is
 * not a database this version knows, or cannot be read, is left as it is
 * (CLOPS_ERROR_CACHE_IO naming it). */
clops_status clops_tuning_table_save(const clops_context *ctx, const struct clops_tuning_table *t);
void clops_tuning_table_free(struct clops_tuning_table *t);
/* CLOPS_SUCCESS if the context's database may be written (missing, empty or
 * of this version), else the failure a record would give (the tuner checks
 * before it measures anything). */
clops_status clops_tuning_db_check(const clops_context *ctx);
/* The context's tuning database file (clops_context_tuning_db). */
void clops_tuning_db_file(const clops_context *ctx, char *out, size_t size);

#endif
