/*
 * ship_int.h - what the shipping files share (ship.c: export, merge, the checks, the copy of
 * rows; ship_dump.c: dump, load): SQL text built in a growing buffer, column lists read from
 * the schema, the in-memory output and its checks.
 */
#ifndef RT_SHIP_INT_H
#define RT_SHIP_INT_H

#include <stddef.h>
#include <sqlite3.h>
#include "ship.h"

/* A growing text buffer; 'oom' is set (and the text left as it was) once an append fails. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

void ship_sb_raw(sbuf *b, const char *s, size_t n);
void ship_sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The columns of one table, in their order; pk: position in the primary key (0: none). */
#define SHIP_MAX_COLS 64
typedef struct cols {
    int n;
    char name[SHIP_MAX_COLS][64];
    int pk[SHIP_MAX_COLS];
} cols;

/* The columns of 'table' in schema 'schema' of 'db'. */
int ship_table_cols(sqlite3 *db, const char *path, const char *schema, const char *table,
                    cols *c, rt_err *e);

/* The columns that identify a row of 'table' of the main schema across databases, in key
 * order: its first UNIQUE constraint's when 'unique', else its primary key's. */
int ship_key_cols(sqlite3 *db, const char *path, const char *table, int unique, cols *c,
                  rt_err *e);

/* Append the columns of 'c' but 'skip' (NULL: none) as a comma list: each as prefix"name",
 * or as the expression that 'map' gives for it (pairs {name, expr}, ending with {NULL}). */
void ship_sb_cols(sbuf *b, const cols *c, const char *prefix, const char *skip,
                  const char *const (*map)[2]);

/* A new in-memory database with the schema: the output under construction. */
int ship_mem_new(const char *label, sqlite3 **out, rt_err *e);

/* The checks of every database a shipping command reads or writes (store_ship_stats in
 * ship.h lists them), on schema 'schema' of 'db', named 'path' in the messages. */
int ship_check_db(sqlite3 *db, const char *schema, const char *path, rt_err *e);

/* Attach an image of a database (sqlite3_malloc'd; taken over) to 'dst' as "src". */
int ship_attach_image(sqlite3 *dst, const char *path, unsigned char *img,
                      sqlite3_int64 size, rt_err *e);

/* What the copy of rows takes from "src". */
typedef struct copy_opts {
    const char *const *match;   /* export: device name substrings (any case); NULL: all */
    int nmatch;
    int measurements;           /* measurements and runs too */
    int everything;             /* merge, load: every kernel and binary; export: those the
                                 * copied rows need, CUBINs of the best kernels only */
} copy_opts;

/* Copy from the attached "src" into main what 'o' asks for, then detach "src". */
int ship_copy_detach(sqlite3 *db, const char *path, const copy_opts *o,
                     store_ship_stats *st, rt_err *e);

/* Fill the row counts of 'st' from the output 'db'. */
int ship_counts(sqlite3 *db, const char *path, store_ship_stats *st, rt_err *e);

/* Check the in-memory output as its inputs were checked (one that fails is refused, named
 * in st->refused), then write it whole into 'out' (store_write_output). */
int ship_write_db(sqlite3 *db, const char *out, int force, const char *const *in, int nin,
                  store_ship_stats *st, rt_err *e);

#endif
