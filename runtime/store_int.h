/*
 * store_int.h - what the two sides of the store share, for their files only: the handle's
 * insides and the helpers of runtime/store.c that the tuner's writing side (tuner/store_*.c,
 * tuner/ship*.c) builds on. libredtune reads (runtime/store.c, runtime/store_lookup.c); the
 * tuner writes, with the same error discipline: RT_EDB naming the path, what was being done
 * and SQLite's own message.
 */
#ifndef RT_STORE_INT_H
#define RT_STORE_INT_H

#include <sqlite3.h>
#include "store.h"

#define STORE_BUSY_TIMEOUT_MS 10000

struct store {
    sqlite3 *db;
    char *path;
    int version;   /* the file's schema version (store_version) */
};

/* The tables that make a file redtune's, in dependency order. */
extern const char *const store_tables[];
#define STORE_NTABLES 6

/* What a file holds, as far as opening it is concerned (store_classify, store_inspect). */
enum {
    DB_NEW,        /* no tables and user_version 0: gets the schema (STORE_WRITE) */
    DB_CURRENT,    /* redtune's, at STORE_SCHEMA_VERSION */
    DB_OLDER,      /* redtune's, at an older version: to be migrated */
    DB_REFUSED     /* anything else; the reason is in the rt_err */
};

/* Bind text, or NULL when 'text' is NULL. The text must outlive the step. */
static inline int bind_text(sqlite3_stmt *st, int i, const char *text)
{
    return sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
}

/* Text of a result column, "" for NULL, so that callers never see a NULL string. */
static inline const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* A case's types for messages: "f32" when acc and result are NULL or the type itself, else
 * "bf16 acc=f32 result=f32". Returns buf. */
const char *store_type_text(const char *type, const char *acc, const char *result, char *buf,
                            size_t len);

/* RT_EDB "path: what: SQLite's message"; store_fail for a store's connection. */
int store_db_fail(sqlite3 *db, const char *path, const char *what, rt_err *e);
int store_fail(store *s, const char *what, rt_err *e);

/* Run SQL text without results (transaction control, pragmas, the schema). */
int store_exec(sqlite3 *db, const char *path, const char *sql, const char *what, rt_err *e);

/* Undo an open transaction, if any; for error paths, whose message is already set. */
void store_tx_rollback(sqlite3 *db);

/* The busy handler of every connection ('arg': the path); see store_set_wait_notice. */
int store_busy_wait(void *arg, int count);

/* A single-integer query (?1 bound to 'arg' when not NULL); *out is 0 when no row. */
int store_query_int(sqlite3 *db, const char *path, const char *sql, const char *arg,
                    long long *out, rt_err *e);

/* Say what the database on 'db' is (DB_*); 'may_be_new': a file with no tables is
 * acceptable. RT_EDB only when SQLite fails; a refusal is DB_REFUSED with its reason in 'e'. */
int store_classify(sqlite3 *db, const char *path, int may_be_new, int *kind, int *version,
                   rt_err *e);

/* Decide, touching nothing, what the existing regular file at 'path' is for opening in
 * 'mode' (DB_*); every refusal is RT_EDB with its reason. */
int store_inspect(const char *path, int mode, int *kind, int *version, rt_err *e);

/* "file:" URI for 'path', percent-encoded, with optional query text; malloc'd or NULL. */
char *store_make_uri(const char *path, const char *query);

/* store_open's argument checks (RT_EINVAL "store_open: ..."); sets *out to NULL. */
int store_open_args(const char *path, int mode, store **out, rt_err *e);


/* PRAGMA quick_check of schema 'schema' of 'db': RT_EDB "path: corrupt database ..." unless
 * it answers "ok". */
int store_quick_check_schema(sqlite3 *db, const char *schema, const char *path, rt_err *e);

/* Step a statement whose columns are those of store_best_row (in its order) and call 'cb'
 * for each row; a non-zero return from 'cb' stops the walk (not an error). */
int store_walk_best_rows(store *s, sqlite3_stmt *st, const char *what,
                         int (*cb)(const store_best_row *row, void *arg), void *arg,
                         rt_err *e);

#endif
