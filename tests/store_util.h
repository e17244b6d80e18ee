/*
 * store_util.h - what the database's test files (tests/test_store*.c) share: a scratch
 * directory per test (cmocka's setup and teardown), made-up devices, kernels and
 * measurements, queries outside the store, the winners listed as text, and the labelled
 * kernels and one-case databases of the shipping tests.
 *
 * Fixtures in tests/db/ (the tests run from the repository root), made with the sqlite3 CLI
 * from tests/db/ (page size 512 keeps them small):
 *   not_sqlite.db   printf 'This is a plain text file, not an SQLite database.\n' > not_sqlite.db
 *   foreign.db      sqlite3 foreign.db "PRAGMA page_size = 512; CREATE TABLE people
 *                       (name TEXT, age INTEGER); INSERT INTO people VALUES ('ada', 36);"
 *   foreign_wal.db  sqlite3 foreign_wal.db "PRAGMA page_size = 512; PRAGMA journal_mode = WAL;
 *                       CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello');"
 *   newer.db        sqlite3 newer.db "PRAGMA page_size = 512;" ".read ../../db/schema.sql"
 *                       "PRAGMA user_version = 99;"
 *   partial.db      sqlite3 partial.db "PRAGMA page_size = 512;" ".read ../../db/schema.sql"
 *                       "DROP TABLE best;"
 *   v2.db           a version 2 file (before acc and result), made by the redtune of that
 *                   schema: sqlite3 v2.db "PRAGMA page_size = 512;" ".read SCHEMA_V2" and
 *                   INSERTs of 1 device, 1 run, 2 kernels (hashes the SHA-256 of their
 *                   sources "// v2 fixture kernel 1" and "... 2"), 1 CUBIN, 3 measurements
 *                   (one segmented) and 2 best rows; SCHEMA_V2 is db/schema.sql of commit
 *                   9466524. v2.sql is its `redtune dump` by that redtune.
 *   corrupt.db      sqlite3 corrupt.db "PRAGMA page_size = 512;" ".read ../../db/schema.sql"
 *                       "WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i
 *                       WHERE x < 40) INSERT INTO kernels (hash, family, params, source)
 *                       SELECT 'k' || x, 'f', 'p', printf('%.200c', 'x') FROM i;"
 *                   then the first 64 bytes of its last page overwritten with 0xa5 (its
 *                   schema reads fine; PRAGMA quick_check finds the page broken)
 * Each test copies the fixture it needs into its own mkdtemp directory first, so that a
 * store.c that wrongly writes can never damage the originals.
 */
#ifndef RT_TESTS_STORE_UTIL_H
#define RT_TESTS_STORE_UTIL_H

#include <stddef.h>

#include "runtime/store.h"
#include "tuner/store_tune.h"

/* ---------------------------------------------------------------- scratch directories */

typedef struct fixture {
    char dir[64];
    char db[128];     /* dir/t.db, not created */
} fixture;

/* cmocka's setup: a new /tmp/redtune-store-XXXXXX as *state (a fixture); teardown removes it
 * and everything under it. */
int store_util_setup(void **state);
int store_util_teardown(void **state);

/* One test of a store group, in its own scratch directory (cmocka.h first). */
#define STORE_TEST(f) cmocka_unit_test_setup_teardown(f, store_util_setup, store_util_teardown)

/* Whether 'path' exists; the number of entries in a directory, besides . and .. */
int exists(const char *path);
int dir_entries(const char *dir);

/* ---------------------------------------------------------------- rows */

/* An H100-like device of that name, uuid, ordinal and compute capability. */
rt_device make_device(const char *name, const char *uuid, int ordinal, int major, int minor);

/* store_open that must succeed (the test fails with its message otherwise). */
store *open_ok(const char *path, int mode);

/* A kernel of made-up source, stored (or the test fails). */
void put_kernel(store *s, const char *hash, const char *family, const char *params);

/* A measurement of min f32 flat n=2^20 cold on device 'dev' (the other times from 'median'),
 * and one stored (or the test fails). */
store_measurement meas(long long dev, const char *hash, const char *status, double median,
                       int verified);
void put_meas(store *s, const store_measurement *m);

/* One query returning one integer on an existing file, outside the store (-12345 when it
 * returns no row). */
long long raw_int(const char *path, const char *sql);

/* ---------------------------------------------------------------- the winners as text */

typedef struct collected {
    int count, stop_after;
    char lines[16][256];
} collected;

/* store_list_best callbacks: each row as one line into c->lines, counted in c->count.
 * collect writes every field "|"-separated and stops the walk after c->stop_after rows (0:
 * never); collect_spec writes "op type acc result layout n". */
int collect(const store_best_row *r, void *arg);
int collect_spec(const store_best_row *r, void *arg);

/* ---------------------------------------------------------------- the shipping tests */

/* Their kernels go by a label: source "// LABEL\n...", hash its SHA-256 (what ship_hash
 * returns, valid for the whole test run); ship_kernel stores one. */
const char *ship_hash(const char *label);
void ship_kernel(store *s, const char *label, const char *family, const char *params);

/* A database at 'path' with one device (uuid) and one case, min f32 n=2^20, measured for
 * kernel 'kernel' (a label) at 'median' (verified or not), best updated, a CUBIN for sm_90. */
void ship_db(const char *path, const char *name, const char *uuid, const char *kernel,
             double median, int verified);

/* The label of the kernel of the best row of min f32 2^20 on 'uuid' in 'path' ("" when
 * none). */
void best_kernel(const char *path, const char *uuid, char out[64]);

#endif
